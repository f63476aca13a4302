package router

import (
	"slices"
	"testing"
)

// A message for a session that must start first gets 👀 at once, before
// Claude is started (which takes seconds), and ✅ on delivery as always; a
// message for a running session gets only ✅ (first contact 2, finding 5).
func TestMessageForAStoppedSessionIsMarkedBeforeTheStart(t *testing.T) {
	r, ss, _, l, _ := newRouter(t)
	ss.setState("stopped")
	r.HandleMessage(msg("hello"))
	l.waitFor(t, "react m1 ✅")
	ops := l.all()
	eyes, ensure := slices.Index(ops, "react m1 👀"), slices.Index(ops, "ensure home-api")
	if eyes < 0 || ensure < 0 || eyes > ensure {
		t.Fatalf("👀 not before the start: %q", ops)
	}

	r, ss, _, l, _ = newRouter(t)
	ss.setState("idle")
	r.HandleMessage(msg("hello"))
	l.waitFor(t, "react m1 ✅")
	if slices.Contains(l.all(), "react m1 👀") {
		t.Fatalf("a running session's message got 👀: %q", l.all())
	}
}
