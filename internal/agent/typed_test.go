package agent

import (
	"strings"
	"testing"
)

// A box shows a text as typed when it starts with its first 40
// characters, white space ignored (the TUIs wrap and re-indent), or with
// the TUI's placeholder for a long paste; an empty text is never shown.
func TestBoxHolds(t *testing.T) {
	long := strings.Repeat("word ", 30)
	for _, c := range []struct {
		box, text string
		want      bool
	}{
		{"fix the\n  failing test", "fix the failing test", true},
		{long[:60], long, true}, // a long text scrolled: its head is enough
		{"[Pasted text #1 +40 lines]", long, true},
		{"fix the", "fix the failing test", false},
		{"something else", "fix the failing test", false},
		{"", "", false},
	} {
		if got := BoxHolds(c.box, c.text, "[Pasted text #"); got != c.want {
			t.Errorf("BoxHolds(%q, %q) = %v", c.box, c.text, got)
		}
	}
}
