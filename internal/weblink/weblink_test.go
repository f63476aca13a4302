package weblink

import (
	"strings"
	"testing"
)

// A link the redaction every post passes would change (a token that
// happens to look like a secret) is not posted: it would no longer open.
func TestLinkButtonRefusesWhatRedactionWouldChange(t *testing.T) {
	if _, ok := Button("Open", "https://ccb.example/s/ghp_"+strings.Repeat("a", 36)+"/"); ok {
		t.Error("a link the redaction masks was made a button")
	}
	for _, bad := range []string{"", "javascript:alert(1)", "https://h.example/" + strings.Repeat("a", 600)} {
		if _, ok := Button("Open", bad); ok {
			t.Errorf("%q was made a button", bad)
		}
	}
	if b, ok := Button("Open", "https://ccb.example/s/AXNhYmM/"); !ok || !b.Link() || b.CustomID != "" {
		t.Errorf("a plain link: %+v, %v", b, ok)
	}
}
