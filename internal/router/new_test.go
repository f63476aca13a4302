package router

import (
	"context"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/state"
)

// clearingSessions is an agent that records its next conversation id as
// /clear goes in (Claude's SessionStart "clear" can come that fast).
type clearingSessions struct {
	*fakeSessions
	store *state.Store
}

func (s clearingSessions) Deliver(ctx context.Context, key, text string) (time.Time, error) {
	at, err := s.fakeSessions.Deliver(ctx, key, text)
	if err == nil {
		_, err = s.store.Sessions.Update(ctx, key, func(x *state.Session) error { x.ClaudeSessionID = "new-2"; return nil })
	}
	return at, err
}

// /new forgets the conversation it leaves, in the runtime record and the
// registry: an agent records its next id only when it has one (Codex at
// its next prompt, issue 29), and a restart before then must start a fresh
// conversation, not resume the old one. An id that came already stays; a
// session without a pane keeps its conversation.
func TestNewForgetsTheConversationItLeaves(t *testing.T) {
	r, ss, _, l, store := newRouter(t)
	const key = "home-api"
	remember := func(id string) {
		t.Helper()
		ctx := context.Background()
		if _, err := store.Sessions.Update(ctx, key, func(x *state.Session) error { x.ClaudeSessionID = id; return nil }); err != nil {
			t.Fatal(err)
		}
		if _, err := r.opt.Registry.Sessions.Update(ctx, key, func(g *state.Registered) error { g.ClaudeSessionID = id; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	ids := func() (string, string) {
		s, _ := store.Sessions.Get(key)
		g, _ := r.opt.Registry.Sessions.Get(key)
		return s.ClaudeSessionID, g.ClaudeSessionID
	}
	newCmd := func() {
		r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, Name: "new"}, fakeResponder{l: l})
	}

	remember("old-1")
	newCmd()
	l.waitFor(t, `deliver home-api "/clear"`)
	if s, g := ids(); s != "" || g != "" {
		t.Fatalf("after /new the records name %q (runtime) and %q (registry), want none", s, g)
	}

	remember("old-1")
	r.opt.Sessions = clearingSessions{ss, store}
	newCmd()
	waitUntilTrue(t, func() bool { s, g := ids(); return s == "new-2" && g == "" })

	r.opt.Sessions = ss
	remember("old-1")
	ss.noPane = true
	newCmd()
	time.Sleep(50 * time.Millisecond)
	if s, g := ids(); s != "old-1" || g != "old-1" {
		t.Fatalf("/new without a pane changed the records: %q, %q", s, g)
	}
}

func waitUntilTrue(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition never held")
		}
	}
}
