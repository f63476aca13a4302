package telegram

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/ccbridge/ccbridge/internal/chat"
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

// render is the core's text as Telegram HTML chunks. The core still
// writes some of Discord's own markup, which Telegram would show raw: a
// channel <#id> becomes a link to the forum topic, a timestamp <t:unix:…>
// the time in UTC. A message reference becomes a link to it (refs.go).
func render(text string) []string {
	return format.Split(undiscord(chat.RenderRefs(text, messageLink)))
}

func undiscord(text string) string {
	if !strings.Contains(text, "<#") && !strings.Contains(text, "<t:") {
		return text
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(text, '<')
		if i < 0 {
			b.WriteString(text)
			return b.String()
		}
		b.WriteString(text[:i])
		text = text[i:]
		end := strings.IndexByte(text, '>')
		if end < 0 {
			b.WriteString(text)
			return b.String()
		}
		tag, repl := text[1:end], ""
		switch {
		case strings.HasPrefix(tag, "#"):
			repl = topicLink(tag[1:])
		case strings.HasPrefix(tag, "t:"):
			unix, _, _ := strings.Cut(tag[2:], ":")
			if n, err := strconv.ParseInt(unix, 10, 64); err == nil {
				repl = time.Unix(n, 0).UTC().Format("2006-01-02 15:04 UTC")
			}
		}
		if repl == "" {
			b.WriteByte('<')
			text = text[1:]
			continue
		}
		b.WriteString(repl)
		text = text[end+1:]
	}
}

// topicLink is a Markdown link to a channel id's topic in the Telegram
// app (t.me/c/<id>/<topic>), or "" when the id is no supergroup's: text
// that only looks like markup (Claude's, about Discord) stays as it is.
func topicLink(channelID string) string {
	p, err := ParseChannel(channelID)
	if err != nil {
		return ""
	}
	internal, ok := strings.CutPrefix(strconv.FormatInt(p.Chat, 10), "-100")
	if !ok {
		return ""
	}
	if p.Topic == 0 {
		return "[the group](https://t.me/c/" + internal + ")"
	}
	return "[topic " + strconv.FormatInt(p.Topic, 10) + "](https://t.me/c/" + internal + "/" + strconv.FormatInt(p.Topic, 10) + ")"
}
