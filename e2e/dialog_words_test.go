//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
	"github.com/ccbridge/ccbridge/internal/testutil/fakemodel"
	"github.com/ccbridge/ccbridge/internal/testutil/tmuxtest"
)

// Claude's replies are free text: one that says the folder trust's "Quick
// safety check:" or ends "Do you want to proceed?" sits above the idle
// input box and is no dialog. The next message goes in at once, with no
// "waiting on a prompt", and /new starts a fresh conversation
// (fidelity-3 B1).
func TestDialogWordsInARepliesHoldNothingBack(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	b.model.Script("SCN_WORDS_SAFETY", fakemodel.Text("Quick safety check: the tests pass and nothing else changed."))
	b.model.Script("SCN_WORDS_PROCEED", fakemodel.Text("The change is ready. Do you want to proceed?"))
	b.say(p, "SCN_WORDS_SAFETY")
	b.waitReply(p, "Quick safety check: the tests pass and nothing else changed.")
	next := b.say(p, "after the safety check")
	b.waitReply(p, "ok: after the safety check")
	b.waitReaction(next, "✅")
	b.say(p, "SCN_WORDS_PROCEED")
	b.waitReply(p, "The change is ready. Do you want to proceed?")
	// The reply is posted from Claude's Stop, which can come before Claude
	// has drawn it on its screen; the words must be there for /new to meet.
	tmuxtest.WaitScreen(t, b.tmux, b.pane(p), "● The change is ready. Do you want to proceed?", 30*time.Second)
	before, _ := b.store.Sessions.Get(p.key)
	it := b.srv.Command(p.channel, "new", b.owner, nil)
	r := b.srv.WaitResponse(it, 5*time.Second)
	b.srv.WaitMessage(long, "the /new answer", func(m *fakediscord.Message) bool {
		return m.ID == r.OriginalID && strings.Contains(m.Content, "fresh conversation")
	})
	for deadline := time.Now().Add(long); ; time.Sleep(100 * time.Millisecond) {
		if s, _ := b.store.Sessions.Get(p.key); s.ClaudeSessionID != "" && s.ClaudeSessionID != before.ClaudeSessionID {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no fresh conversation after /new")
		}
	}
	after := b.say(p, "after new")
	b.waitReply(p, "after new") // Claude puts the record of /clear before it
	b.waitReaction(after, "✅")
	for _, c := range b.contents(p.channel) {
		if strings.Contains(c, "waiting on a prompt") || strings.Contains(c, "Claude is asking this in its terminal") {
			t.Fatalf("a reply was taken for a dialog: %q", c)
		}
	}
}

// A permission card that expired leaves Claude's dialog open in the
// terminal and no request pending: the dialog watcher still never posts it
// as a dialog no hook reports, with a "1. Yes" button (security-3
// finding 1). The card says to answer it in the terminal or with /screen.
func TestDialogOfAnExpiredCardIsNotPostedAgain(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "prompt_timeout = \"3s\"")
	p := b.projects[0]
	b.model.Script("SCN_EXPIRE", fakemodel.Tool("", "Bash", map[string]any{"command": "touch expired.txt", "description": "Expire"}))
	b.say(p, "SCN_EXPIRE")
	card := b.waitCard(p, "the card", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "touch expired.txt") })
	b.waitCardText(card, "Expired")
	// The watcher looks every 3 s and lets a dialog settle twice.
	time.Sleep(10 * time.Second)
	if screen, _ := b.tmux.Capture(t.Context(), b.panes()[0].ID, 0); !strings.Contains(screen, "Do you want to proceed?") {
		t.Fatalf("the terminal dialog is gone:\n%s", screen)
	}
	for _, c := range b.contents(p.channel) {
		if strings.Contains(c, "Claude is asking this in its terminal") {
			t.Fatalf("the expired card's dialog was posted: %q", c)
		}
	}
}
