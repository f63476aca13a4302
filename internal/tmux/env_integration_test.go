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
