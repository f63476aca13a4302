package session

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/tmux"
)

// A command that is not there is named before any pane is made (the first
// message used to wait the whole start timeout). The message a phone shows
// is short and says the cause once; the PATH searched goes to the log
// (first contact 2, finding 6).
func TestStartNamesAMissingCommandAtOnce(t *testing.T) {
	m, panes, _, target := newManager(t)
	m.opt.FindProgram = findProgram
	m.opt.Config.Claude.Command = "claude-nowhere"
	m.opt.Config.Claude.Env["PATH"] = "/nonexistent/bin"
	_, _, err := m.Ensure(context.Background(), target)
	var ce *CommandError
	if !errors.As(err, &ce) || ce.Command != "claude-nowhere" || ce.Path != "/nonexistent/bin" {
		t.Fatalf("err = %v", err)
	}
	want := `"claude-nowhere" is not on the PATH the sessions get: install Claude Code there, or set [claude].command to its full path`
	if got := ce.Error(); got != want {
		t.Errorf("message\n got %q\nwant %q", got, want)
	}
	var log strings.Builder
	slog.New(slog.NewTextHandler(&log, nil)).Info("start failed", "err", err)
	if !strings.Contains(log.String(), "PATH=/nonexistent/bin") {
		t.Errorf("the log lacks the PATH searched: %s", log.String())
	}
	if len(panes.specs) != 0 {
		t.Fatalf("a pane was started: %+v", panes.specs)
	}
}

func TestCheckCommandFindsAProgramOnThePanesPath(t *testing.T) {
	m, _, _, _ := newManager(t)
	cfg := m.opt.Config
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "claude"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notexec"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.Claude.Env["PATH"] = "/nonexistent:" + dir
	for cmd, ok := range map[string]bool{"claude": true, filepath.Join(dir, "claude"): true, "notexec": false, "/opt/claude": false, dir: false} {
		cfg.Claude.Command = cmd
		if err := CheckCommand(cfg); (err == nil) != ok {
			t.Errorf("CheckCommand(%q) = %v, want ok=%v", cmd, err, ok)
		}
	}
}

func TestStartRefusesAnUnknownPermissionMode(t *testing.T) {
	m, panes, _, target := newManager(t)
	target.PermissionMode = "yolo"
	if _, _, err := m.Ensure(context.Background(), target); !errors.Is(err, ErrBadMode) {
		t.Fatalf("err = %v", err)
	}
	if len(panes.specs) != 0 {
		t.Fatal("a pane was started")
	}
}

// When Claude's pane was the tmux server's only one, its exit takes the
// server with it: that is an exit too, reported at once.
func TestStartReportsAClaudeThatTookTheServerWithIt(t *testing.T) {
	m, panes, _, target := newManager(t)
	m.opt.StartTimeout = time.Minute
	panes.captureErr = tmux.ErrNoServer
	start := time.Now()
	_, _, err := m.Ensure(context.Background(), target)
	var nr *NotReadyError
	if !errors.Is(err, errExited) || !errors.As(err, &nr) || !nr.Exited || !strings.Contains(nr.Screen, `"/opt/claude"`) || !strings.Contains(nr.Screen, "PATH=") {
		t.Fatalf("err = %v (%+v)", err, nr)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %s", d)
	}
}

// A full path that is not there says so, without doubling the cause.
func TestCommandErrorForAFullPath(t *testing.T) {
	err := checkCommand(&config.Config{Claude: config.Claude{Command: "/opt/nowhere/claude"}}, findProgram)
	want := `"/opt/nowhere/claude" does not exist: set [claude].command to the full path of Claude Code`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

// Claude refusing its arguments exits at once: the pane is kept so its own
// error line is read and reported (not ccbridge's guess), then removed; a
// Claude that came up is let go, so its later exit closes its window
// (first contact 2, finding 6).
func TestStartReportsClaudesOwnErrorWhenItExitsAtOnce(t *testing.T) {
	m, panes, _, target := newManager(t)
	m.opt.StartTimeout = time.Minute
	panes.screen = "error: unknown option '--no-such-flag'\n\n\n\n" + tmux.DeadNotice + " (status 1, Sat Nov 28 07:35:23 2026)\n"
	panes.dieOnStart = true
	start := time.Now()
	_, _, err := m.Ensure(context.Background(), target)
	var nr *NotReadyError
	if !errors.Is(err, errExited) || !errors.As(err, &nr) || !nr.Exited {
		t.Fatalf("err = %v", err)
	}
	if nr.Screen != "error: unknown option '--no-such-flag'" {
		t.Errorf("screen = %q, want Claude's own line only", nr.Screen)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %s", d)
	}
	if !panes.specs[0].KeepOnExit || !slices.Contains(panes.killed, "%1") {
		t.Errorf("kept %v, killed %q", panes.specs[0].KeepOnExit, panes.killed)
	}

	m, panes, _, target = newManager(t)
	if _, _, err := m.Ensure(context.Background(), target); err != nil {
		t.Fatal(err)
	}
	if !panes.specs[0].KeepOnExit || !slices.Equal(panes.letGo, []string{"%1"}) {
		t.Errorf("kept %v, let go %q", panes.specs[0].KeepOnExit, panes.letGo)
	}
}

// tmux marks a pane dead before it has drawn all of it: its notice comes
// last. The last words are read once the notice is there, not from the
// capture that first saw the pane dead.
func TestStartReadsTheLastWordsOnceTmuxsNoticeIsThere(t *testing.T) {
	m, panes, _, target := newManager(t)
	m.opt.StartTimeout = time.Minute
	panes.screen = "\n" // nothing drawn yet
	panes.dieOnStart = true
	captures := 0
	panes.onCapture = func(f *fakePanes) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if captures++; captures == 2 {
			f.screen = "error: unknown option '--no-such-flag'\n\n" + tmux.DeadNotice + " (status 1, Sat Nov 28 07:35:23 2026)\n"
		}
	}
	_, _, err := m.Ensure(context.Background(), target)
	var nr *NotReadyError
	if !errors.As(err, &nr) || !nr.Exited || nr.Screen != "error: unknown option '--no-such-flag'" {
		t.Fatalf("err = %v", err)
	}
}

// A Claude still coming up at the start timeout is let go too: its pane
// must not stay, dead, after it exits later.
func TestStartLetsGoOfAPaneLeftAtTheTimeout(t *testing.T) {
	m, panes, _, target := newManager(t)
	m.opt.StartTimeout = 300 * time.Millisecond
	panes.screen = "Claude Code is starting…"
	var nr *NotReadyError
	if _, _, err := m.Ensure(context.Background(), target); !errors.As(err, &nr) || nr.Exited {
		t.Fatalf("err = %v", err)
	}
	if !slices.Equal(panes.letGo, []string{"%1"}) || len(panes.killed) != 0 {
		t.Errorf("let go %q, killed %q", panes.letGo, panes.killed)
	}
}
