package session

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/tmux"
)

// takenOver sets up a hand-started Claude in pane %7 of the user's tmux
// server at /tmp/u.sock, taken over by a thread's session.
func takenOver(t *testing.T) (*Manager, *fakePanes, *fakePanes, *state.Store, Target) {
	t.Helper()
	m, own, store, target := newManager(t)
	user := &fakePanes{screen: readyScreen, panes: []tmux.Pane{{ID: "%7", ServerPID: 900, PID: 4242}}}
	var opened []string
	servers := func(socket string) (Panes, error) { opened = append(opened, socket); return user, nil }
	m.opt.UserServers = servers
	m.opt.Panes.(*panes).user = servers
	ctx := context.Background()
	if _, err := store.Live.Update(ctx, "cs1", func(l *state.Live) error {
		l.ClaudeSessionID, l.Server, l.Project, l.Cwd, l.Socket, l.Pane = "cs1", "home", "api", "/w", "/tmp/u.sock", "%7"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	target.Key, target.ThreadID = ThreadKey("home", "api", "555"), "555"
	if err := m.TakeOver(ctx, target, "cs1"); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(opened, "/tmp/u.sock") {
		t.Fatalf("servers opened: %q", opened)
	}
	return m, own, user, store, target
}

func TestTakenOverPaneIsDrivenOnTheUsersServer(t *testing.T) {
	m, own, user, store, target := takenOver(t)
	ctx := context.Background()
	if l, _ := store.Live.Get("cs1"); l.Bound != target.Key {
		t.Fatalf("live record not bound: %+v", l)
	}
	if s, _ := store.Sessions.Get(target.Key); s.Socket != "/tmp/u.sock" || s.PaneID != "%7" || s.ClaudeSessionID != "cs1" || s.ThreadID != "555" {
		t.Fatalf("session record %+v", s)
	}
	pane, started, err := m.Ensure(ctx, target)
	if err != nil || started || pane != "%7/900/4242@/tmp/u.sock" {
		t.Fatalf("Ensure = %q %v %v", pane, started, err)
	}
	if _, err := m.Deliver(ctx, target.Key, "hello"); err != nil {
		t.Fatal(err)
	}
	if ops := user.takeOps(); !slices.Equal(ops, []string{"keys %7 C-u", "paste %7 hello", "keys %7 Enter"}) {
		t.Fatalf("user's pane ops = %q", ops)
	}
	// The same dialog guard: nothing typed into a prompt in the user's pane.
	user.screen = "Bash command\n echo hi\n Do you want to proceed?\n ❯ 1. Yes\n"
	if _, err := m.Deliver(ctx, target.Key, "again"); !errors.Is(err, ErrDialogOpen) {
		t.Fatalf("err = %v", err)
	}
	if ops := user.takeOps(); len(ops) != 0 {
		t.Fatalf("typed into a dialog: %q", ops)
	}
	if ops := own.takeOps(); len(ops) != 0 {
		t.Fatalf("the bridge's server was used: %q", ops)
	}
}

func TestStoppingATakenOverSessionReleasesItWithoutTouchingThePane(t *testing.T) {
	m, own, user, store, target := takenOver(t)
	ctx := context.Background()
	if err := m.Stop(ctx, target.Key); err != nil {
		t.Fatal(err)
	}
	if ops := user.takeOps(); len(ops) != 0 {
		t.Fatalf("stop typed into the user's pane: %q", ops)
	}
	if l, _ := store.Live.Get("cs1"); l.Bound != "" {
		t.Fatalf("still bound after stop: %+v", l)
	}
	// A later message takes it over again; a gone pane is never replaced.
	if _, _, err := m.Ensure(ctx, target); err != nil {
		t.Fatal(err)
	}
	if l, _ := store.Live.Get("cs1"); l.Bound != target.Key {
		t.Fatalf("not bound again: %+v", l)
	}
	user.panes = nil
	if _, _, err := m.Ensure(ctx, target); !errors.Is(err, ErrForeignGone) {
		t.Fatalf("Ensure on a gone pane: %v", err)
	}
	if _, err := m.Deliver(ctx, target.Key, "x"); !errors.Is(err, ErrNoPane) {
		t.Fatalf("Deliver on a gone pane: %v", err)
	}
	if ops := own.takeOps(); len(ops) != 0 {
		t.Fatalf("a Claude was started in place of the user's: %q", ops)
	}
	if err := m.opt.Panes.KillPane(ctx, "%7@/tmp/u.sock"); err == nil {
		t.Fatal("the wrapper would kill a user's pane")
	}
}

// After Claude exits, the pane may hold the user's shell: nothing is typed.
func TestEndedTakenOverClaudeGetsNoKeys(t *testing.T) {
	m, _, user, store, target := takenOver(t)
	ctx := context.Background()
	store.Live.Update(ctx, "cs1", func(l *state.Live) error { l.Ended = true; return nil })
	if _, err := m.Deliver(ctx, target.Key, "rm -rf ~"); !errors.Is(err, ErrNoPane) {
		t.Fatalf("Deliver after the Claude ended: %v", err)
	}
	if _, _, err := m.Ensure(ctx, target); !errors.Is(err, ErrForeignGone) {
		t.Fatalf("Ensure after the Claude ended: %v", err)
	}
	if ops := user.takeOps(); len(ops) != 0 {
		t.Fatalf("typed into the user's pane: %q", ops)
	}
}

// /sessions' list: a hand-started Claude in tmux whose pane is alive, one
// outside tmux (listed, not driveable), and none whose pane is gone.
func TestLiveSessionsListsHandStartedClaudes(t *testing.T) {
	m, _, store, _ := newManager(t)
	user := &fakePanes{screen: readyScreen, panes: []tmux.Pane{{ID: "%7", ServerPID: 900, PID: 4242}}}
	m.opt.UserServers = func(string) (Panes, error) { return user, nil }
	m.opt.Panes.(*panes).user = m.opt.UserServers
	ctx := context.Background()
	add := func(id, socket, pane string) {
		store.Live.Update(ctx, id, func(l *state.Live) error {
			l.ClaudeSessionID, l.Server, l.Project, l.Socket, l.Pane, l.LastEventAt = id, "home", "api", socket, pane, time.Now()
			return nil
		})
	}
	add("intmux", "/tmp/u.sock", "%7")
	add("outside", "", "")
	add("gone", "/tmp/u.sock", "%9")
	list, err := m.LiveSessions(ctx, "home", "api")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, l := range list {
		got[l.ClaudeSessionID] = l.Driveable
	}
	if len(got) != 2 || !got["intmux"] || got["outside"] {
		t.Fatalf("listed %v", got)
	}
	if _, ok := got["outside"]; !ok {
		t.Fatal("the Claude outside tmux is not listed")
	}
	if err := m.TakeOver(ctx, Target{Key: "home-api-t1"}, "outside"); !errors.Is(err, ErrNotDriveable) {
		t.Fatalf("TakeOver outside tmux: %v", err)
	}
}

// The user's tmux server restarted (same socket, a new server pid) and its
// %7 now holds some other program: nothing is typed into it.
func TestTakenOverPaneOnARestartedServerIsGone(t *testing.T) {
	for name, change := range map[string]func(p *tmux.Pane){
		"server pid": func(p *tmux.Pane) { p.ServerPID = 901 },
		"pane pid":   func(p *tmux.Pane) { p.PID = 5000 },
	} {
		t.Run(name, func(t *testing.T) {
			m, _, user, _, target := takenOver(t)
			ctx := context.Background()
			user.mu.Lock()
			change(&user.panes[0])
			user.mu.Unlock()
			if _, err := m.Deliver(ctx, target.Key, "hello"); !errors.Is(err, ErrForeignGone) {
				t.Fatalf("Deliver: err = %v, want ErrForeignGone", err)
			}
			if err := m.PressKeys(ctx, target.Key, "1"); !errors.Is(err, ErrForeignGone) {
				t.Fatalf("PressKeys: err = %v, want ErrForeignGone", err)
			}
			if _, _, err := m.Ensure(ctx, target); !errors.Is(err, ErrForeignGone) {
				t.Fatalf("Ensure: err = %v, want ErrForeignGone", err)
			}
			if ops := user.takeOps(); len(ops) != 0 {
				t.Fatalf("typed into another server's pane: %q", ops)
			}
		})
	}
}

// The pane changes between the check and a key: tmux refuses the key by
// the pids it checks as it sends it.
func TestTakenOverPaneIsCheckedAsEachKeyIsSent(t *testing.T) {
	m, _, user, _, target := takenOver(t)
	user.onPaste = func(f *fakePanes, _ string) { f.panes[0].ServerPID = 901 }
	if _, err := m.Deliver(context.Background(), target.Key, "hello"); !errors.Is(err, ErrForeignGone) {
		t.Fatalf("err = %v, want ErrForeignGone", err)
	}
	for _, op := range user.takeOps() {
		if strings.HasPrefix(op, "keys") && strings.Contains(op, "Enter") {
			t.Fatalf("Enter pressed in a pane that changed: %q", op)
		}
	}
}

// A person's draft in their own terminal is never cleared for a message
// from Discord; text ccbridge itself left there is.
func TestTakenOverTerminalsDraftIsNeverCleared(t *testing.T) {
	m, _, user, _, target := takenOver(t)
	ctx := context.Background()
	user.screen = setBox(readyScreen, "half a thought of mine")
	if _, err := m.Deliver(ctx, target.Key, "hello"); !errors.Is(err, ErrDraft) {
		t.Fatalf("err = %v, want ErrDraft", err)
	}
	if ops := user.takeOps(); len(ops) != 0 {
		t.Fatalf("typed over the person's draft: %q", ops)
	}
	m.mu.Lock()
	m.typed[target.Key] = "an earlier message"
	m.mu.Unlock()
	user.screen = setBox(readyScreen, "an earlier message")
	if _, err := m.Deliver(ctx, target.Key, "hello"); err != nil {
		t.Fatal(err)
	}
	if ops := user.takeOps(); !slices.Equal(ops, []string{"keys %7 C-u", "paste %7 hello", "keys %7 Enter"}) {
		t.Fatalf("ops = %q", ops)
	}
}
