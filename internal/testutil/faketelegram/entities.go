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

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

type openTag struct {
	name   string
	entity Entity
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
		stack = append(stack, openTag{name: name, entity: e})
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
