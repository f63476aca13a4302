package weblink

import (
	"context"
	"errors"
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

// A web view that could not start is not called off: /web says it could
// not start and why, privately, and /diff offers no link nor points to /web.
func TestDownViewSaysWhyItIsNotThere(t *testing.T) {
	l := Down{Err: errors.New("listen tcp 127.0.0.1:7878: bind: address already in use")}
	for _, p := range []Place{{Server: "home", Key: "home-api", Label: "api"}, {Server: "home"}} {
		r := Reply(l, p)
		if !r.Ephemeral || len(r.Rows) != 0 || !strings.Contains(r.Content, "could not start") || !strings.Contains(r.Content, "address already in use") {
			t.Errorf("Reply(%+v) = %+v", p, r)
		}
	}
	for _, public := range []bool{true, false} {
		if b, note := Diff(l, "home-api", public, nil); b.URL != "" || note != "" {
			t.Errorf("Diff(public=%v) = %+v, %q", public, b, note)
		}
	}
	if err := l.Revoke(context.Background()); err == nil || !strings.Contains(err.Error(), "address already in use") {
		t.Errorf("Revoke = %v", err)
	}
}
