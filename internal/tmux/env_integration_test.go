//go:build integration

package tmux_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/testutil/tmuxtest"
	"github.com/ccbridge/ccbridge/internal/tmux"
)

// paneEnv starts a pane that writes its environment to a file and returns
// what it wrote.
func paneEnv(t *testing.T, srv *tmux.Server, env map[string]string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "env")
	if _, err := srv.NewPane(context.Background(), tmux.PaneSpec{Session: "ccbridge-home", Window: "w", Dir: t.TempDir(), Env: env,
		Argv: []string{"sh", "-c", "env > " + out + ".tmp && mv " + out + ".tmp " + out + "; exec sleep 600"}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(out); err == nil {
			return string(b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("pane wrote no environment")
	return ""
}

// The per-pane variables (the session key, [claude].env and its API keys)
// reach their own pane only: a window opened later in the same tmux session,
// by ccbridge or by a person (C-b c), does not inherit them, and a key
// removed from [claude].env is gone from the next pane (first contact 2,
// finding 4).
func TestPaneEnvironmentStaysWithItsPane(t *testing.T) {
	srv := tmuxtest.New(t)
	first := paneEnv(t, srv, map[string]string{"CCBRIDGE_SESSION": "home-api", "ANTHROPIC_API_KEY": "sk-ant-first-pane"})
	for _, want := range []string{"CCBRIDGE_SESSION=home-api", "ANTHROPIC_API_KEY=sk-ant-first-pane"} {
		if !strings.Contains(first, want) {
			t.Fatalf("first pane lacks %s:\n%s", want, first)
		}
	}
	byHand := paneEnv(t, srv, nil)
	for _, leak := range []string{"CCBRIDGE_SESSION", "sk-ant-first-pane"} {
		if strings.Contains(byHand, leak) {
			t.Errorf("a later window of the session inherited %s:\n%s", leak, byHand)
		}
	}
	next := paneEnv(t, srv, map[string]string{"CCBRIDGE_SESSION": "home-web"})
	if strings.Contains(next, "sk-ant-first-pane") || !strings.Contains(next, "CCBRIDGE_SESSION=home-web") {
		t.Errorf("the next pane has a removed key, or lacks its own:\n%s", next)
	}
}

// A pane kept on exit shows what its program printed before it died, its
// death is seen, and once let go a later exit closes it.
func TestKeepOnExitKeepsAnEarlyDeathsWords(t *testing.T) {
	srv := tmuxtest.New(t)
	ctx := context.Background()
	pane, err := srv.NewPane(ctx, tmux.PaneSpec{Session: "ccbridge-home", Window: "w", Dir: t.TempDir(), KeepOnExit: true, Width: 80, Height: 10,
		Argv: []string{"sh", "-c", "echo \"error: unknown option '--no-such-flag'\"; printf '\\n\\n\\n\\n\\n'; sleep 0.3; exit 1"}})
	if err != nil {
		t.Fatal(err)
	}
	dead := false
	for deadline := time.Now().Add(10 * time.Second); !dead && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		panes, _ := srv.ListPanes(ctx)
		for _, p := range panes {
			dead = dead || (p.ID == pane && p.Dead)
		}
	}
	if !dead {
		t.Fatal("the pane is not kept dead")
	}
	// What the product needs of a pane kept dead is its program's words.
	// tmux marks the pane dead before it writes its "Pane is dead" notice,
	// and under load tmux 3.3a was seen not to write it at all (2 runs in
	// 50), and once to lose a line already scrolled into the history of
	// the dead pane: session.lastWords waits for the notice a moment and
	// reads the words either way, and Claude's error is its last lines, so
	// neither is asserted here. A program that prints and exits at once
	// can lose its output to tmux (it closes the pty on the child's exit
	// before reading it: seen under load); the sleep stands for the time
	// Claude's Node process takes to exit after printing.
	screen, err := srv.Capture(ctx, pane, 100)
	for deadline := time.Now().Add(10 * time.Second); err == nil && !strings.Contains(screen, "error: unknown option '--no-such-flag'") && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		screen, err = srv.Capture(ctx, pane, 100)
	}
	if err != nil || !strings.Contains(screen, "error: unknown option '--no-such-flag'") {
		t.Fatalf("capture = %q, %v", screen, err)
	}

	live, err := srv.NewPane(ctx, tmux.PaneSpec{Session: "ccbridge-home", Window: "x", Dir: t.TempDir(), KeepOnExit: true, Argv: []string{"sh", "-c", "read x; exit 0"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.LetGoOnExit(ctx, live); err != nil {
		t.Fatal(err)
	}
	if err := srv.SendKeys(ctx, live, tmux.KeyEnter); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := srv.Capture(ctx, live, 0); err != nil {
			return // gone
		}
	}
	t.Fatal("a pane let go stayed after its exit")
}
