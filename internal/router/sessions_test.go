package router

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

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
func (f *fakeTakeovers) History(string, string, string, int) ([]history.Conversation, error) {
	return nil, nil
}
func (f *fakeTakeovers) Conversation(string, string, string, string) (history.Conversation, bool) {
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
	reply := r.listSessions(target{key: "home-api", rt: r.routeTable()[channel]})
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
		r.HandleComponent(l.onDrawn(r, chat.ComponentEvent{Server: "home", ChannelID: ch, User: chat.User{ID: user}, CustomID: take}), fakeResponder{l: l})
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

// pastTakeovers is fakeTakeovers with one past conversation.
type pastTakeovers struct{ *fakeTakeovers }

func (p pastTakeovers) History(string, string, string, int) ([]history.Conversation, error) {
	return []history.Conversation{{ID: "conv-1", FirstPrompt: "fix the parser", Turns: 2}}, nil
}
func (p pastTakeovers) Conversation(_, _, _, id string) (history.Conversation, bool) {
	return history.Conversation{ID: "conv-1", FirstPrompt: "fix the parser", Turns: 2}, id == "conv-1"
}

// A Resume button of /sessions resumes only a conversation no Claude runs
// at the moment of the click (here an MCP client's session started on it
// after the listing), and only from a recent listing; Fork still works
// (security-2.md finding 16).
func TestResumeRefusesAConversationRunningElsewhere(t *testing.T) {
	r, ss, _, l, store := newRouter(t)
	tk := pastTakeovers{&fakeTakeovers{fakeSessions: ss}}
	r.opt.Sessions = tk
	reply := r.listSessions(target{key: "home-api", rt: r.routeTable()[channel]})
	ids := map[string]string{}
	for _, row := range reply.Rows {
		for _, b := range row.Buttons {
			d, err := chat.DecodeID(b.CustomID)
			if err != nil {
				t.Fatal(err)
			}
			ids[d.Args[0]] = b.CustomID
			if len(d.Args) != 3 {
				t.Fatalf("%s carries no listing time: %q", b.Label, b.CustomID)
			}
		}
	}
	if ids["resume"] == "" || ids["fork"] == "" {
		t.Fatalf("listing %q, rows %+v", reply.Content, reply.Rows)
	}
	// An MCP client resumes the conversation after the listing.
	if _, err := store.Sessions.Update(context.Background(), "mcp@0123456789abcdef", func(s *state.Session) error {
		s.ClaudeSessionID = "conv-1"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	click := func(id string) {
		r.HandleComponent(l.onDrawn(r, chat.ComponentEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, CustomID: id}), fakeResponder{l: l})
	}
	click(ids["resume"])
	click(ids["here"])
	if slices.ContainsFunc(l.all(), func(s string) bool { return strings.HasPrefix(s, "thread ") || strings.HasPrefix(s, "stop ") }) {
		t.Fatalf("a running conversation was resumed again: %q", l.all())
	}
	if !slices.ContainsFunc(l.all(), func(s string) bool { return strings.Contains(s, "running now (in a session of an MCP client)") }) {
		t.Fatalf("no refusal: %q", l.all())
	}
	click(ids["fork"])
	if !slices.ContainsFunc(l.all(), func(s string) bool { return strings.HasPrefix(s, "thread fork: ") }) {
		t.Fatalf("the fork was refused: %q", l.all())
	}
	// A listing's buttons expire.
	old := r.ssID("resume", "conv-1", strconv.FormatInt(time.Now().Add(-time.Hour).Unix(), 36))
	n := len(l.all())
	click(old)
	if !slices.ContainsFunc(l.all()[n:], func(s string) bool { return strings.Contains(s, "more than 10 minutes old") }) {
		t.Fatalf("an hour-old listing was used: %q", l.all()[n:])
	}
}
