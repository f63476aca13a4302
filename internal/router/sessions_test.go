package router

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/history"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
)

// fakeTakeovers adds what /sessions needs to the fake session manager.
type fakeTakeovers struct {
	*fakeSessions
	live  []session.LiveSession
	taken []string
}

func (f *fakeTakeovers) LiveSessions(context.Context, string, string) ([]session.LiveSession, error) {
	return f.live, nil
}
func (f *fakeTakeovers) History(string, int) ([]history.Conversation, error) { return nil, nil }
func (f *fakeTakeovers) Conversation(string, string) (history.Conversation, bool) {
	return history.Conversation{}, false
}
func (f *fakeTakeovers) LiveRecord(id string) (state.Live, error) {
	return state.Live{ClaudeSessionID: id, Socket: "/tmp/u.sock", Pane: "%7", Cwd: "/w", FirstPrompt: "fix the parser"}, nil
}
func (f *fakeTakeovers) TakeOver(_ context.Context, t session.Target, id string) error {
	f.taken = append(f.taken, t.Key+" "+id)
	return nil
}

func TestTakeOverOnlyByOwnersInTheProjectChannel(t *testing.T) {
	r, ss, _, l, _ := newRouter(t)
	tk := &fakeTakeovers{fakeSessions: ss, live: []session.LiveSession{{Hand: true, Driveable: true, ClaudeSessionID: "cs1", Pane: "%7", State: "idle"}}}
	r.opt.Sessions = tk
	reply := r.listSessions(target{key: "home-api", rt: r.routes[channel]})
	var take string
	for _, row := range reply.Rows {
		for _, b := range row.Buttons {
			if strings.Contains(b.CustomID, "|ss|take|") {
				take = b.CustomID
			}
		}
	}
	if take == "" || !strings.Contains(reply.Content, "started by hand, pane `%7` — idle") {
		t.Fatalf("listing %q, rows %+v", reply.Content, reply.Rows)
	}
	click := func(ch, user string) {
		r.HandleComponent(chat.ComponentEvent{Server: "home", ChannelID: ch, User: chat.User{ID: user}, CustomID: take}, fakeResponder{l})
	}
	click(channel, "100000000000000077") // not an owner
	click("999", owner)                  // not the project channel
	if len(tk.taken) != 0 {
		t.Fatalf("taken over by a stranger or elsewhere: %q", tk.taken)
	}
	click(channel, owner)
	if len(tk.taken) != 1 || !strings.HasSuffix(tk.taken[0], " cs1") || !strings.Contains(tk.taken[0], "-t") {
		t.Fatalf("taken = %q", tk.taken)
	}
	if !slices.ContainsFunc(l.all(), func(s string) bool { return strings.Contains(s, "Took over in <#") }) {
		t.Fatalf("log = %q", l.all())
	}
}
