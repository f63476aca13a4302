package session

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/tmux"
)

// A command that is not there is named, with the PATH used, before any pane
// is made (the first message used to wait the whole start timeout).
func TestStartNamesAMissingCommandAtOnce(t *testing.T) {
	m, panes, _, target := newManager(t)
	m.opt.FindProgram = findProgram
	m.opt.Config.Claude.Command = "claude-nowhere"
	m.opt.Config.Claude.Env["PATH"] = "/nonexistent/bin"
	_, _, err := m.Ensure(context.Background(), target)
	var ce *CommandError
	if !errors.As(err, &ce) || ce.Command != "claude-nowhere" || !strings.Contains(err.Error(), "PATH=/nonexistent/bin") {
		t.Fatalf("err = %v", err)
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
