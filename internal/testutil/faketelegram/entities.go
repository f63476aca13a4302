package faketelegram

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// The entity parsers follow Telegram's own (tdlib, MessageEntity.cpp
// parse_html and parse_markdown_v2): the same tags and markers, the same
// refusals, the same error texts with byte offsets into the sent text.
// Offsets and lengths of the resulting entities are in UTF-16 code units.

// Entity is a MessageEntity.
type Entity struct {
	Type          string `json:"type"`
	Offset        int    `json:"offset"`
	Length        int    `json:"length"`
	URL           string `json:"url,omitempty"`
	Language      string `json:"language,omitempty"`
	CustomEmojiID string `json:"custom_emoji_id,omitempty"`
}

// parseText applies a parse_mode; it returns the plain text and its
// entities, or the reason Telegram gives after "can't parse entities: ".
func parseText(mode, text string) (string, []Entity, string) {
	switch mode {
	case "":
		return text, nil, ""
	case "HTML", "html":
		return parseHTML(text)
	case "MarkdownV2", "markdownv2":
		return parseMarkdownV2(text)
	case "Markdown", "markdown":
		return parseMarkdown(text)
	}
	return "", nil, "unsupported parse_mode"
}

// textBuilder collects parsed text and counts its UTF-16 length.
type textBuilder struct {
	b      strings.Builder
	utf16n int
}

func (t *textBuilder) writeRune(r rune) {
	t.b.WriteRune(r)
	t.utf16n += utf16.RuneLen(r)
}

func (t *textBuilder) writeString(s string) {
	for _, r := range s {
		t.writeRune(r)
	}
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

type openTag struct {
	name      string
	entity    Entity
	byteStart int
}

var htmlTags = map[string]string{
	"b": "bold", "strong": "bold", "i": "italic", "em": "italic", "u": "underline", "ins": "underline",
	"s": "strikethrough", "strike": "strikethrough", "del": "strikethrough", "tg-spoiler": "spoiler",
	"span": "spoiler", "a": "text_link", "code": "code", "pre": "pre", "blockquote": "blockquote",
	"tg-emoji": "custom_emoji",
}

func parseHTML(text string) (string, []Entity, string) {
	var out textBuilder
	var stack []openTag
	var entities []Entity
	for i := 0; i < len(text); {
		c := text[i]
		if c == '&' {
			if r, n := htmlEntity(text[i:]); n > 0 {
				out.writeRune(r)
				i += n
				continue
			}
		}
		if c != '<' {
			r, n := utf8.DecodeRuneInString(text[i:])
			out.writeRune(r)
			i += n
			continue
		}
		begin := i
		i++
		if i < len(text) && text[i] == '/' {
			i++
			nameStart := i
			for i < len(text) && text[i] != '>' && !isSpace(text[i]) {
				i++
			}
			name := strings.ToLower(text[nameStart:i])
			for i < len(text) && isSpace(text[i]) {
				i++
			}
			if i >= len(text) || text[i] != '>' {
				return "", nil, fmt.Sprintf("Can't find end tag corresponding to start tag at byte offset %d", begin)
			}
			i++
			if len(stack) == 0 {
				return "", nil, fmt.Sprintf("Unexpected end tag at byte offset %d", begin)
			}
			top := stack[len(stack)-1]
			if name != top.name {
				return "", nil, fmt.Sprintf("Unmatched end tag at byte offset %d, expected \"</%s>\", found \"</%s>\"", begin, top.name, name)
			}
			stack = stack[:len(stack)-1]
			e := top.entity
			e.Length = out.utf16n - e.Offset
			if e.Type == "pre" && len(entities) > 0 {
				// <pre><code class="language-x">: the inner code gives pre its language.
				last := entities[len(entities)-1]
				if last.Type == "code" && last.Offset == e.Offset && last.Length == e.Length && last.Language != "" {
					e.Language = last.Language
					entities = entities[:len(entities)-1]
				}
			}
			if e.Length > 0 {
				entities = append(entities, e)
			}
			continue
		}
		nameStart := i
		for i < len(text) && text[i] != '>' && !isSpace(text[i]) {
			i++
		}
		if i >= len(text) {
			return "", nil, fmt.Sprintf("Unclosed start tag at byte offset %d", begin)
		}
		name := strings.ToLower(text[nameStart:i])
		typ, ok := htmlTags[name]
		if !ok {
			return "", nil, fmt.Sprintf("Unsupported start tag \"%s\" at byte offset %d", name, begin)
		}
		attrs, n, msg := htmlAttrs(text[i:], name, begin)
		if msg != "" {
			return "", nil, msg
		}
		i += n
		e := Entity{Type: typ, Offset: out.utf16n}
		switch name {
		case "a":
			e.URL = attrs["href"]
		case "span":
			if attrs["class"] != "tg-spoiler" {
				return "", nil, fmt.Sprintf("Tag \"span\" must have class \"tg-spoiler\" at byte offset %d", begin)
			}
		case "code":
			e.Language, _ = strings.CutPrefix(attrs["class"], "language-")
		case "blockquote":
			if _, ok := attrs["expandable"]; ok {
				e.Type = "expandable_blockquote"
			}
		case "tg-emoji":
			e.CustomEmojiID = attrs["emoji-id"]
		}
		stack = append(stack, openTag{name: name, entity: e, byteStart: begin})
	}
	if len(stack) > 0 {
		return "", nil, fmt.Sprintf("Can't find end tag corresponding to start tag \"%s\"", stack[len(stack)-1].name)
	}
	return out.b.String(), sortEntities(entities), ""
}

// htmlAttrs reads a start tag's attributes up to and including '>'.
func htmlAttrs(s, tag string, begin int) (map[string]string, int, string) {
	attrs := map[string]string{}
	i := 0
	for {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i >= len(s) {
			return nil, 0, fmt.Sprintf("Unclosed start tag at byte offset %d", begin)
		}
		if s[i] == '>' {
			return attrs, i + 1, ""
		}
		start := i
		for i < len(s) && s[i] != '=' && s[i] != '>' && !isSpace(s[i]) {
			i++
		}
		name := strings.ToLower(s[start:i])
		if i < len(s) && s[i] != '=' {
			attrs[name] = "" // a bare attribute such as "expandable"
			continue
		}
		if i >= len(s) {
			return nil, 0, fmt.Sprintf("Unclosed start tag at byte offset %d", begin)
		}
		i++ // '='
		if i >= len(s) {
			return nil, 0, fmt.Sprintf("Unclosed start tag at byte offset %d", begin)
		}
		var val string
		if q := s[i]; q == '"' || q == '\'' {
			end := strings.IndexByte(s[i+1:], q)
			if end < 0 {
				return nil, 0, fmt.Sprintf("Unclosed start tag at byte offset %d", begin)
			}
			val = s[i+1 : i+1+end]
			i += end + 2
		} else {
			start := i
			for i < len(s) && s[i] != '>' && !isSpace(s[i]) {
				i++
			}
			val = s[start:i]
		}
		if val == "" && name == "" {
			return nil, 0, fmt.Sprintf("Empty attribute name in the tag \"%s\" at byte offset %d", tag, begin)
		}
		attrs[name] = unescapeHTML(val)
	}
}

func unescapeHTML(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] == '&' {
			if r, n := htmlEntity(s[i:]); n > 0 {
				b.WriteRune(r)
				i += n
				continue
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// htmlEntity decodes the four named entities and numeric ones Telegram
// knows; any other '&' is kept as it is, as Telegram does.
func htmlEntity(s string) (rune, int) {
	end := strings.IndexByte(s, ';')
	if end < 2 || end > 10 {
		return 0, 0
	}
	name := s[1:end]
	switch name {
	case "lt":
		return '<', end + 1
	case "gt":
		return '>', end + 1
	case "amp":
		return '&', end + 1
	case "quot":
		return '"', end + 1
	}
	if num, ok := strings.CutPrefix(name, "#"); ok {
		base := 10
		if hex, ok := strings.CutPrefix(num, "x"); ok {
			num, base = hex, 16
		}
		v, err := strconv.ParseUint(num, base, 32)
		if err != nil || v == 0 || v > utf8.MaxRune {
			return 0, 0
		}
		return rune(v), end + 1
	}
	return 0, 0
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// MarkdownV2

const reservedV2 = "_*[]()~`>#+-=|{}.!"

type mdOpen struct {
	typ       string // tdlib's name, used in errors: Bold, Italic, ...
	offset    int    // utf16
	byteStart int
	language  string
}

var mdEntityType = map[string]string{
	"Bold": "bold", "Italic": "italic", "Underline": "underline", "Strikethrough": "strikethrough",
	"Spoiler": "spoiler", "Code": "code", "Pre": "pre", "TextUrl": "text_link", "CustomEmoji": "custom_emoji",
}

func reservedErr(c byte) string {
	return fmt.Sprintf("Character '%c' is reserved and must be escaped with the preceding '\\'", c)
}

func parseMarkdownV2(text string) (string, []Entity, string) {
	var out textBuilder
	var stack []mdOpen
	var entities []Entity
	quote := -1 // utf16 offset where the current block quote began, or -1
	for i := 0; i < len(text); {
		c := text[i]
		inCode := len(stack) > 0 && (stack[len(stack)-1].typ == "Code" || stack[len(stack)-1].typ == "Pre")
		if atLine := i == 0 || text[i-1] == '\n'; atLine && !inCode {
			switch {
			case c == '>':
				if quote < 0 {
					quote = out.utf16n
				}
				i++
				continue
			case strings.HasPrefix(text[i:], "**>"):
				if quote < 0 {
					quote = out.utf16n
				}
				i += 3
				continue
			case quote >= 0:
				entities = closeQuote(entities, quote, out.utf16n)
				quote = -1
			}
		}
		if c == '\\' && i+1 < len(text) && text[i+1] > 0 && text[i+1] <= 126 {
			out.writeRune(rune(text[i+1]))
			i += 2
			continue
		}
		if inCode && c != '`' {
			r, n := utf8.DecodeRuneInString(text[i:])
			out.writeRune(r)
			i += n
			continue
		}
		if quote >= 0 && c == '|' && strings.HasPrefix(text[i:], "||") && (i+2 == len(text) || text[i+2] == '\n') &&
			(len(stack) == 0 || stack[len(stack)-1].typ != "Spoiler") {
			i += 2 // the end of an expandable block quote
			continue
		}
		if !strings.ContainsRune(reservedV2, rune(c)) {
			r, n := utf8.DecodeRuneInString(text[i:])
			out.writeRune(r)
			i += n
			continue
		}
		end := false
		if len(stack) > 0 {
			switch stack[len(stack)-1].typ {
			case "Bold":
				end = c == '*'
			case "Italic":
				end = c == '_' && !strings.HasPrefix(text[i:], "__")
			case "Underline":
				end = strings.HasPrefix(text[i:], "__")
			case "Strikethrough":
				end = c == '~'
			case "Spoiler":
				end = strings.HasPrefix(text[i:], "||")
			case "Code":
				end = c == '`'
			case "Pre":
				end = strings.HasPrefix(text[i:], "```")
			case "TextUrl", "CustomEmoji":
				end = c == ']'
			}
		}
		if !end {
			o := mdOpen{offset: out.utf16n, byteStart: i}
			switch {
			case strings.HasPrefix(text[i:], "__"):
				o.typ, i = "Underline", i+2
			case c == '_':
				o.typ, i = "Italic", i+1
			case c == '*':
				o.typ, i = "Bold", i+1
			case c == '~':
				o.typ, i = "Strikethrough", i+1
			case strings.HasPrefix(text[i:], "||"):
				o.typ, i = "Spoiler", i+2
			case c == '[':
				o.typ, i = "TextUrl", i+1
			case strings.HasPrefix(text[i:], "!["):
				o.typ, i = "CustomEmoji", i+2
			case strings.HasPrefix(text[i:], "```"):
				i += 3
				langEnd := i
				for langEnd < len(text) && !isSpace(text[langEnd]) && text[langEnd] != '`' {
					langEnd++
				}
				if langEnd < len(text) && text[langEnd] == '\n' {
					o.language = text[i:langEnd]
					i = langEnd + 1
				}
				o.typ = "Pre"
			case c == '`':
				o.typ, i = "Code", i+1
			default:
				return "", nil, reservedErr(c)
			}
			stack = append(stack, o)
			continue
		}
		top := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		e := Entity{Type: mdEntityType[top.typ], Offset: top.offset, Length: out.utf16n - top.offset, Language: top.language}
		switch top.typ {
		case "Underline", "Spoiler":
			i += 2
		case "Pre":
			i += 3
		case "TextUrl", "CustomEmoji":
			i++
			if i < len(text) && text[i] == '(' {
				url, n, ok := readURL(text[i+1:])
				if !ok {
					return "", nil, fmt.Sprintf("Can't find end of a URL at byte offset %d", i+1)
				}
				i += 1 + n
				e.URL = url
			} else if top.typ == "CustomEmoji" {
				return "", nil, fmt.Sprintf("Custom emoji entity must contain a tg://emoji URL at byte offset %d", top.byteStart)
			}
			if top.typ == "CustomEmoji" {
				id, ok := strings.CutPrefix(e.URL, "tg://emoji?id=")
				if !ok || id == "" {
					return "", nil, fmt.Sprintf("Custom emoji URL must have an emoji identifier at byte offset %d", top.byteStart)
				}
				e.URL, e.CustomEmojiID = "", id
			}
		default:
			i++
		}
		if e.Length > 0 && (e.Type != "text_link" || e.URL != "") {
			entities = append(entities, e)
		}
	}
	if len(stack) > 0 {
		top := stack[len(stack)-1]
		return "", nil, fmt.Sprintf("Can't find end of %s entity at byte offset %d", top.typ, top.byteStart)
	}
	if quote >= 0 {
		entities = closeQuote(entities, quote, out.utf16n)
	}
	return out.b.String(), sortEntities(entities), ""
}

// parseMarkdown is the legacy Markdown mode: *bold*, _italic_, `code`,
// ```pre```, [text](url); no nesting, and only _ * ` [ can be escaped.
func parseMarkdown(text string) (string, []Entity, string) {
	var out textBuilder
	var entities []Entity
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c == '\\' && i+1 < len(text) && strings.IndexByte("_*`[", text[i+1]) >= 0 {
			i++
			out.writeRune(rune(text[i]))
			continue
		}
		if strings.IndexByte("_*`[", c) < 0 {
			r, n := utf8.DecodeRuneInString(text[i:])
			out.writeRune(r)
			i += n - 1
			continue
		}
		begin := i
		endChar := c
		if c == '[' {
			endChar = ']'
		}
		i++
		pre := false
		var lang string
		if c == '`' && strings.HasPrefix(text[i:], "``") {
			i += 2
			pre = true
			langEnd := i
			for langEnd < len(text) && !isSpace(text[langEnd]) && text[langEnd] != '`' {
				langEnd++
			}
			if langEnd != i && langEnd < len(text) && text[langEnd] != '`' {
				lang, i = text[i:langEnd], langEnd
			}
			if i < len(text) && (text[i] == '\n' || text[i] == '\r') {
				i++
			}
		}
		start := out.utf16n
		for i < len(text) && (text[i] != endChar || (pre && !strings.HasPrefix(text[i+1:], "``"))) {
			r, n := utf8.DecodeRuneInString(text[i:])
			out.writeRune(r)
			i += n
		}
		if i >= len(text) {
			return "", nil, fmt.Sprintf("Can't find end of the entity starting at byte offset %d", begin)
		}
		content := text[begin+1 : i]
		if pre {
			i += 2
		}
		if out.utf16n == start {
			continue
		}
		e := Entity{Offset: start, Length: out.utf16n - start}
		switch c {
		case '_':
			e.Type = "italic"
		case '*':
			e.Type = "bold"
		case '`':
			e.Type, e.Language = "code", lang
			if pre {
				e.Type = "pre"
			}
		case '[':
			e.Type, e.URL = "text_link", content
			if strings.HasPrefix(text[i+1:], "(") {
				end := strings.IndexByte(text[i+2:], ')')
				if end < 0 {
					end = len(text) - i - 2
				}
				e.URL = text[i+2 : i+2+end]
				i += 2 + end
			}
		}
		entities = append(entities, e)
	}
	return out.b.String(), sortEntities(entities), ""
}

// readURL reads an inline link's URL up to ')': inside it only ')' and '\'
// need escaping.
func readURL(s string) (string, int, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			}
		case ')':
			return b.String(), i + 1, true
		default:
			b.WriteByte(s[i])
		}
	}
	return "", 0, false
}

func closeQuote(entities []Entity, start, end int) []Entity {
	if end > start {
		entities = append(entities, Entity{Type: "blockquote", Offset: start, Length: end - start})
	}
	return entities
}

// sortEntities orders entities by offset, longer first, as Telegram
// returns them; of two with the same span the one closed later (the outer
// one) comes first.
func sortEntities(es []Entity) []Entity {
	idx := make([]int, len(es))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		x, y := es[idx[a]], es[idx[b]]
		if x.Offset != y.Offset {
			return x.Offset < y.Offset
		}
		if x.Length != y.Length {
			return x.Length > y.Length
		}
		return idx[a] > idx[b]
	})
	out := make([]Entity, 0, len(es))
	for _, i := range idx {
		out = append(out, es[i])
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
