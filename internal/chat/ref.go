package chat

import "strings"

// MessageRef names a message in the core's text, as <#id> names a channel:
// the core writes it, each front end renders it (RenderRefs) as its own
// link to the message (Discord's jump URL, Telegram's t.me/c link) or as
// the label alone where no link can be made.
type MessageRef struct {
	ChannelID, MessageID string
	// Label is the words shown, e.g. "this message".
	Label string
}

const refOpen = "<ref:"

// notInLabel are what a label may not hold: "|" and ">" would end the
// reference early, brackets and a line break the Markdown link's text a
// front end writes.
const notInLabel = "|>[]\n"

// String is the reference as the core's text carries it:
// <ref:channel/message|label>, the label without notInLabel.
func (r MessageRef) String() string {
	label := strings.Map(func(c rune) rune {
		if strings.ContainsRune(notInLabel, c) {
			return -1
		}
		return c
	}, r.Label)
	return refOpen + r.ChannelID + "/" + r.MessageID + "|" + label + ">"
}

// RenderRefs replaces each message reference in text by link(ref);
// anything else, markup that only looks like one included, is kept.
func RenderRefs(text string, link func(MessageRef) string) string {
	if !strings.Contains(text, refOpen) {
		return text
	}
	var b strings.Builder
	for {
		i := strings.Index(text, refOpen)
		if i < 0 {
			b.WriteString(text)
			return b.String()
		}
		b.WriteString(text[:i])
		text = text[i:]
		ref, n, ok := parseRef(text)
		if !ok {
			b.WriteByte('<')
			text = text[1:]
			continue
		}
		b.WriteString(link(ref))
		text = text[n:]
	}
}

// parseRef reads the reference text starts with and its length.
func parseRef(text string) (MessageRef, int, bool) {
	end := strings.IndexByte(text, '>')
	if end < 0 {
		return MessageRef{}, 0, false
	}
	place, label, ok := strings.Cut(text[len(refOpen):end], "|")
	if !ok || strings.ContainsAny(label, notInLabel) {
		return MessageRef{}, 0, false
	}
	ch, msg, ok := strings.Cut(place, "/")
	if !ok || !isID(ch) || !isID(msg) {
		return MessageRef{}, 0, false
	}
	return MessageRef{ChannelID: ch, MessageID: msg, Label: label}, end + 1, true
}

// isID reports whether s can be a platform's channel or message id as
// the core writes them (Discord's snowflakes, Telegram's "-100….42" and
// "77@-100…"): nothing that could close a link a front end writes.
func isID(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || strings.ContainsRune(".@-_:", c)) {
			return false
		}
	}
	return true
}

// PlainRef renders a reference as its label: where no link can be made.
func PlainRef(r MessageRef) string { return r.Label }
