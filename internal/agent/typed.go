package agent

import (
	"strings"
	"unicode"
)

// typedPrefix is how much of a typed text an input box must show: enough
// to tell it from another, short enough to be on screen before the TUI
// scrolls a long one.
const typedPrefix = 40

// BoxHolds reports whether an agent's input box (its text, the prompt
// mark taken off) shows text as typed: it starts with the text's first
// characters, white space ignored (the TUIs wrap and re-indent), or with
// pasted, the placeholder the TUI draws for a long paste. Each agent's
// screen reader finds its own box; what "typed" means is the same.
func BoxHolds(box, text, pasted string) bool {
	got := Squeeze(box)
	if strings.HasPrefix(got, Squeeze(pasted)) && pasted != "" {
		return true
	}
	want := []rune(Squeeze(text))
	if len(want) > typedPrefix {
		want = want[:typedPrefix]
	}
	return len(want) > 0 && strings.HasPrefix(got, string(want))
}

// Squeeze removes all white space.
func Squeeze(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}
