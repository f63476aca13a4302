package chat

import (
	"strings"
	"unicode"
)

// Plain makes a name someone else chose (a thread's, a file's) plain text
// in a message: one line, without invisible characters (bidi overrides,
// zero-width ones), and every inline Markdown character escaped, so it
// cannot draw a masked link, a code block, bold or a mention. Callers put
// it mid-line, where no heading or quote can start.
func Plain(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	var b strings.Builder
	for _, r := range s {
		if unicode.Is(unicode.Cf, r) || unicode.IsControl(r) {
			continue
		}
		if strings.ContainsRune("\\`*_~|[]<@", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
