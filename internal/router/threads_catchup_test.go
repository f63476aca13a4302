package router

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
)

// READY reads back the server's project channels; the guild's active
// threads then pick the threads: every one under a project channel (one
// ccbridge never saw, started while it was away; one the registry has
// archived, revived meanwhile) and none elsewhere. The threads of live
// sessions that are not active are returned to look up (fidelity-3 D3).
func TestCatchUpThreadsReadsEveryActiveThreadAndChecksTheOthers(t *testing.T) {
	r, _, _, _, _ := catchUpRouter(t, "")
	ctx := context.Background()
	const (
		live, revived, away, closed, fresh, elsewhere = "1300000000000000301", "1300000000000000302", "1300000000000000303", "1300000000000000304", "1300000000000000305", "1300000000000000306"
	)
	for key, g := range map[string]state.Registered{
		"home-api-t1": {Server: "home", Project: "api", ThreadID: live},
		"home-api-t2": {Server: "home", Project: "api", ThreadID: revived, Archived: true},
		"home-api-t3": {Server: "home", Project: "api", ThreadID: away},
		"home-api-t4": {Server: "home", Project: "api", ThreadID: closed, Archived: true},
		"home-gone":   {Server: "home", Project: "gone", ThreadID: "1300000000000000307"},
		"work-x":      {Server: "work", Project: "api", ThreadID: "1300000000000000308"},
	} {
		if _, err := r.opt.Registry.Sessions.Update(ctx, key, func(x *state.Registered) error { *x = g; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if got := r.CatchUpChannels("home"); !maps.Equal(got, map[string]string{channel: ""}) {
		t.Fatalf("CatchUpChannels = %v", got)
	}
	read, check := r.CatchUpThreads("home", map[string]string{live: channel, revived: channel, fresh: channel, elsewhere: "100000000000000099"})
	if want := map[string]string{live: channel, revived: channel, fresh: channel}; !maps.Equal(read, want) {
		t.Errorf("read = %v, want %v", read, want)
	}
	if want := map[string]string{away: channel}; !maps.Equal(check, want) {
		t.Errorf("check = %v, want %v", check, want)
	}
	r.opt.History = nil
	if got, _ := r.CatchUpThreads("home", map[string]string{live: channel}); got != nil || r.CatchUpChannels("home") != nil {
		t.Fatalf("without catch-up: %v", got)
	}
}

// A thread started while ccbridge was away has no cursor: what was sent in
// it lately is delivered, with the age rule of a first start.
func TestCatchUpDeliversAThreadStartedWhileAway(t *testing.T) {
	r, _, h, l, _ := catchUpRouter(t, "")
	h.mu.Lock()
	for _, m := range []struct {
		id, text string
		ago      time.Duration
	}{{"1300000000000000401", "ancient", 7 * 24 * time.Hour}, {"1300000000000000402", "in the new thread", time.Minute}} {
		h.msgs = append(h.msgs, Missed{Event: chat.MessageEvent{ChannelID: thread, MessageID: m.id, Author: chat.User{ID: owner}, Content: m.text}, At: time.Now().Add(-m.ago)})
	}
	h.mu.Unlock()
	r.CatchUp("home", thread, channel)
	l.waitFor(t, "react 1300000000000000402 ✅")
	key := session.ThreadKey("home", "api", thread)
	if got := delivered(l.all()); !slices.Equal(got, []string{`deliver ` + key + ` "in the new thread"`}) {
		t.Fatalf("delivered %q", got)
	}
}

// A live thread archived while ccbridge was away has its session stopped
// (its messages are not read back); one deleted meanwhile is released; one
// archived already is left alone.
func TestThreadAwayStopsOrReleases(t *testing.T) {
	for _, deleted := range []bool{false, true} {
		r, ss, _, l, _ := catchUpRouter(t, "")
		key := registerThread(t, r)
		ss.setState("idle")
		r.ThreadAway("home", thread, channel, deleted)
		l.waitFor(t, "stop "+key)
		l.waitFor(t, "release "+key+" force=false")
		if g, _ := r.opt.Registry.Sessions.Get(key); !g.Archived {
			t.Errorf("deleted=%v: the registry still has the thread live", deleted)
		}
	}
	r, ss, _, l, _ := catchUpRouter(t, "")
	key := registerThread(t, r)
	r.remember(key, func(g *state.Registered) { g.Archived = true })
	ss.setState("idle")
	r.ThreadAway("home", thread, channel, false)
	time.Sleep(100 * time.Millisecond)
	if slices.ContainsFunc(l.all(), func(op string) bool { return op == "stop "+key }) {
		t.Fatalf("a thread archived already was closed again: %q", l.all())
	}
}
