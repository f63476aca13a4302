package chat

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Fit cuts a text too long for one message at a line, closes the code
// block it cut with that block's own fence (a ~~~ block, a ```` block
// holding ``` lines), marks the cut, and leaves a text that fits alone.
func TestFitClosesTheBlockItCuts(t *testing.T) {
	lines := strings.Repeat("a line of a screen\n", 200)
	for open, closing := range map[string]string{"```": "```", "~~~\n```": "~~~", "````md\n```": "````"} {
		long := "head\n" + open + "\n" + lines + closing
		got := Fit(long, 2000)
		if n := utf8.RuneCountInString(got); n > 2000 || !strings.HasSuffix(got, "a line of a screen\n"+closing+"\n…") {
			t.Errorf("%s: %d characters, ending %q", open, n, got[len(got)-40:])
		}
	}
	if got := Fit("head\n"+lines, 100); utf8.RuneCountInString(got) > 100 || !strings.HasSuffix(got, "a line of a screen\n…") {
		t.Errorf("no block: %q", got)
	}
	if short := "fits\n```\nx\n```"; Fit(short, 2000) != short {
		t.Errorf("Fit(%q) = %q", short, Fit(short, 2000))
	}
	for _, n := range []int{10, 2, 1, 0} {
		if got := Fit(strings.Repeat("x", 50), n); utf8.RuneCountInString(got) > n || n > 0 && !strings.HasSuffix(got, "…") {
			t.Errorf("Fit to %d: %q", n, got)
		}
	}
}
