package telegram

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/ccbridge/ccbridge/internal/telegram/format"
)

// MaxText is Telegram's most characters (UTF-16 code units, counted after
// entity parsing) in one message.
const MaxText = 4096

// PlainSplit is FormatSplit without formatting: the text escaped for
// HTML, @mentions defused, cut at MaxText (at a line end, or else a space,
// when there is one in the second half of the chunk).
func PlainSplit(markdown string) []string {
	var out []string
	for _, c := range cut(Defuse(markdown), MaxText) {
		out = append(out, format.Escape(c))
	}
	return out
}

// Defuse keeps an @name in relayed text from notifying anyone: a word
// joiner after the @ breaks Telegram's mention detection and shows nothing.
func Defuse(s string) string {
	if !strings.Contains(s, "@") {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		b.WriteRune(r)
		if r == '@' && i+1 < len(s) {
			next, _ := utf8.DecodeRuneInString(s[i+1:])
			if next == '_' || next >= 'a' && next <= 'z' || next >= 'A' && next <= 'Z' || next >= '0' && next <= '9' {
				b.WriteRune('\u2060')
			}
		}
	}
	return b.String()
}

// units is the length of s as Telegram counts it.
func units(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// cut splits text (trimmed) into pieces of at most limit UTF-16 units,
// nothing lost; empty text gives none.
func cut(text string, limit int) []string {
	text = strings.TrimSpace(text)
	var out []string
	for text != "" {
		if units(text) <= limit {
			out = append(out, text)
			break
		}
		end, n := 0, 0
		for i, r := range text {
			if n+utf16.RuneLen(r) > limit {
				break
			}
			n += utf16.RuneLen(r)
			end = i + utf8.RuneLen(r)
		}
		if nl := strings.LastIndexByte(text[:end], '\n'); nl > end/2 {
			end = nl + 1
		} else if sp := strings.LastIndexByte(text[:end], ' '); sp > end/2 {
			end = sp + 1
		}
		piece := strings.TrimSpace(text[:end])
		if piece != "" {
			out = append(out, piece)
		}
		text = strings.TrimSpace(text[end:])
	}
	return out
}
