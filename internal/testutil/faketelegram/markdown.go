package faketelegram

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// reservedV2 are MarkdownV2's characters that must be escaped outside the
// markers they form.
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
