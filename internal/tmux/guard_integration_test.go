//go:build integration

package tmux_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/testutil/tmuxtest"
	"github.com/ccbridge/ccbridge/internal/tmux"
)

// recorderPane starts the recorder after printing banner, and waits until
// both are on the screen.
func recorderPane(t *testing.T, srv *tmux.Server, banner string) (pane, out string) {
	t.Helper()
	out = filepath.Join(t.TempDir(), "recorded")
	exe, _ := os.Executable()
	pane, err := srv.NewPane(context.Background(), tmux.PaneSpec{Session: "guard", Window: "rec", Dir: t.TempDir(),
		Env:  map[string]string{envRecorder: out, "BANNER": banner},
		Argv: []string{"sh", "-c", `printf '%s\n' "$BANNER"; exec "$0"`, exe}, Width: 100, Height: 20})
	if err != nil {
		t.Fatal(err)
	}
	tmuxtest.WaitScreen(t, srv, pane, "recorder ready", 10*time.Second)
	return pane, out
}

func recorded(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

// A guard is checked by tmux against the visible screen; a refused key or
// paste never reaches the program, an allowed one does.
func TestGuardedKeysAndPasteFollowTheScreen(t *testing.T) {
	srv := tmuxtest.New(t)
	ctx := context.Background()
	odd := "a,b}#{x} [y]*?\\z"
	pane, out := recorderPane(t, srv, "Do you want to proceed? "+odd)

	dialog := tmux.Guard{Without: []string{"nothing like this", "Do you want to proceed?"}}
	if err := srv.SendKeysIf(ctx, pane, dialog, tmux.KeyEnter); !errors.Is(err, tmux.ErrRefused) {
		t.Fatalf("Enter under a dialog: err = %v, want ErrRefused", err)
	}
	if err := srv.PasteTextIf(ctx, pane, dialog, "1 hello"); !errors.Is(err, tmux.ErrRefused) {
		t.Fatalf("paste under a dialog: err = %v, want ErrRefused", err)
	}
	if err := srv.SendKeysIf(ctx, pane, tmux.Guard{Without: []string{odd}}, "2"); !errors.Is(err, tmux.ErrRefused) {
		t.Fatalf("a marker with format and pattern characters was not found: %v", err)
	}
	// Sent last, with a guard that holds: once it is recorded, everything
	// refused before it would have been recorded too.
	if err := srv.SendKeysIf(ctx, pane, tmux.Guard{With: []string{"Do you want to proceed?", odd}, Without: []string{"Switch model?"}}, "1"); err != nil {
		t.Fatalf("allowed key: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for recorded(t, out) == "" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := recorded(t, out); got != "1" {
		t.Fatalf("the program received %q, want only the allowed key %q", got, "1")
	}
	if err := srv.PasteTextIf(ctx, pane, tmux.Guard{Without: []string{"Switch model?"}}, "ok"); err != nil {
		t.Fatal(err)
	}
	if err := srv.SendKeysIf(ctx, "%999", dialog, tmux.KeyEnter); !errors.Is(err, tmux.ErrPaneGone) {
		t.Fatalf("guarded key to a missing pane: err = %v, want ErrPaneGone", err)
	}
}

// Names and directories handed to tmux are not format-expanded: a thread
// named with #(…) runs no shell command, and the window shows the name as
// typed. The pane carries its session tag from the start.
func TestNewPaneEscapesFormatsAndTagsThePane(t *testing.T) {
	srv := tmuxtest.New(t)
	ctx := context.Background()
	base := t.TempDir()
	canary := filepath.Join(base, "canary")
	name := "proj/w#(touch " + canary + ")#{pane_id};"
	dir := filepath.Join(base, "d#{pane_id}")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	pane, err := srv.NewPane(ctx, tmux.PaneSpec{Session: "esc", Window: name, Tag: "home-api-t1;", Dir: dir,
		Argv: []string{"sh", "-c", `echo "in $PWD"; exec sleep 600`, "x;"}})
	if err != nil {
		t.Fatal(err)
	}
	tmuxtest.WaitScreen(t, srv, pane, "in "+dir, 5*time.Second)
	panes, err := srv.ListPanes(ctx)
	if err != nil || len(panes) != 1 {
		t.Fatalf("ListPanes = %+v, %v", panes, err)
	}
	if p := panes[0]; p.Window != name || p.Tag != "home-api-t1;" || p.ID != pane {
		t.Errorf("pane = %+v, want window %q and tag %q", p, name, "home-api-t1;")
	}
	// A second window in the now running session, and the server option.
	if _, err := srv.NewPane(ctx, tmux.PaneSpec{Session: "esc", Window: "two", Tag: "k2", Dir: base, Argv: []string{"sleep", "600"}}); err != nil {
		t.Fatal(err)
	}
	panes, _ = srv.ListPanes(ctx)
	if len(panes) != 2 || panes[1].Tag != "k2" || panes[0].Tag != "home-api-t1;" {
		t.Errorf("after a second pane: %+v", panes)
	}
	focus, err := exec.Command("tmux", append(srv.SocketArgs(), "show-options", "-sv", "focus-events")...).Output()
	if err != nil || strings.TrimSpace(string(focus)) != "on" {
		t.Errorf("focus-events = %q, %v", focus, err)
	}
	// tmux runs #(…) jobs in the background, so a command a name started
	// shows up a little later: watch for it a while.
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(canary); err == nil {
			t.Fatalf("a name handed to tmux ran a shell command (%s exists)", canary)
		}
	}
}

// A guard naming the server's and the pane's pids holds only for that
// server and that pane's process: the same pane id on a restarted server
// (or a pane whose program was replaced) receives nothing.
func TestGuardChecksTheServerAndPanePids(t *testing.T) {
	srv := tmuxtest.New(t)
	ctx := context.Background()
	pane, out := recorderPane(t, srv, "pids")
	panes, err := srv.ListPanes(ctx)
	if err != nil || len(panes) != 1 || panes[0].ServerPID == 0 || panes[0].PID == 0 {
		t.Fatalf("panes = %+v, %v", panes, err)
	}
	p := panes[0]
	for _, g := range []tmux.Guard{{ServerPID: p.ServerPID + 1, PanePID: p.PID}, {ServerPID: p.ServerPID, PanePID: p.PID + 1}} {
		if err := srv.SendKeysIf(ctx, pane, g, "1"); !errors.Is(err, tmux.ErrRefused) {
			t.Fatalf("guard %+v: err = %v, want ErrRefused", g, err)
		}
		if err := srv.PasteTextIf(ctx, pane, g, "x"); !errors.Is(err, tmux.ErrRefused) {
			t.Fatalf("paste under guard %+v: err = %v, want ErrRefused", g, err)
		}
	}
	if err := srv.SendKeysIf(ctx, pane, tmux.Guard{ServerPID: p.ServerPID, PanePID: p.PID}, "2"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for recorded(t, out) == "" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := recorded(t, out); got != "2" {
		t.Fatalf("the program received %q, want %q", got, "2")
	}
}

// A Lines term holds only for a whole visible line (its indent aside): the
// line of a longer command does not stand for a shorter one's.
func TestGuardLinesAreWholeLines(t *testing.T) {
	srvT := tmuxtest.New(t)
	ctx := context.Background()
	odd := "$ echo a,b}#{x} [y]*?\\z.+(|)^"
	pane, out := recorderPane(t, srvT, "  $ git push --force origin main\n    "+odd+"\n› 1. Yes, proceed (y)")
	if err := srvT.SendKeysIf(ctx, pane, tmux.Guard{Lines: []string{"$ git push"}}, "2"); !errors.Is(err, tmux.ErrRefused) {
		t.Fatalf("a line's start held as the whole line: err = %v, want ErrRefused", err)
	}
	if err := srvT.SendKeysIf(ctx, pane, tmux.Guard{Lines: []string{"git push --force origin main"}}, "3"); !errors.Is(err, tmux.ErrRefused) {
		t.Fatalf("a line's end held as the whole line: err = %v, want ErrRefused", err)
	}
	if err := srvT.SendKeysIf(ctx, pane, tmux.Guard{Lines: []string{"$ git push --force origin main", odd, "1. Yes, proceed (y)"}}, "1"); err != nil {
		t.Fatalf("whole lines: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for recorded(t, out) == "" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := recorded(t, out); got != "1" {
		t.Fatalf("the program received %q, want only %q", got, "1")
	}
}
