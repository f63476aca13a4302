package tmux

import "strings"

// Sanitize makes text safe to paste: CRLF and lone CR become LF; every
// control character except LF and TAB is removed (ESC above all, so the
// bracketed-paste end sequence "\x1b[201~" cannot close the paste early and
// no escape sequence reaches the program); C1 controls and DEL are removed;
// invalid UTF-8 becomes U+FFFD.
func Sanitize(text string) string {
	text = strings.ToValidUTF8(text, "\uFFFD")
	text = strings.ReplaceAll(text, "\r\n", "\n")
	var b strings.Builder
	b.Grow(len(text))
	for _, r := range text {
		switch {
		case r == '\r':
			b.WriteByte('\n')
		case r == '\n', r == '\t':
			b.WriteRune(r)
		case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
			// dropped
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
