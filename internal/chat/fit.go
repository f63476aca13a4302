package chat

import (
	"strings"
	"unicode/utf8"
)

// fitMark ends a text Fit cut.
const fitMark = "\n…"

// Fit keeps text within n characters, the last guard before a platform
// that refuses a longer message: a longer text is cut at a line break
// (in its second half, if there is one), a code block it leaves open is
// closed with that block's own fence, and "…" marks the cut.
func Fit(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	for k := n - utf8.RuneCountInString(fitMark); k > 0; {
		piece := string([]rune(s)[:k])
		if i := strings.LastIndex(piece, "\n"); i > len(piece)/2 {
			piece = piece[:i]
		}
		out := closeFence(piece, openFence("", piece)) + fitMark
		over := utf8.RuneCountInString(out) - n
		if over <= 0 {
			return out
		}
		k = min(k-over, utf8.RuneCountInString(piece)-1)
	}
	if n < 1 {
		return ""
	}
	return "…" // no room for any of the text
}
