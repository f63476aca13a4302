//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/testutil/claudetest"
	"github.com/ccbridge/ccbridge/internal/testutil/fakemodel"
	"github.com/ccbridge/ccbridge/internal/testutil/tmuxtest"
	"github.com/ccbridge/ccbridge/internal/tmux"
)

// TestBenchRealClaudeRunsOurStopHook proves the bench: the real Claude Code
// in a tmux pane gets a pasted prompt, the fake model answers with a Bash
// tool call and then text, and our hook binary, registered with --settings,
// records the turn's reply.
func TestBenchRealClaudeRunsOurStopHook(t *testing.T) {
	t.Parallel()
	model := fakemodel.New(t)
	model.Script("SCN_BASH",
		fakemodel.Tool("I will run a command.", "Bash", map[string]any{"command": "echo bash-ran", "description": "Say it ran"}),
		fakemodel.Text("First final block.", "The command printed bash-ran."))
	srv := tmuxtest.New(t)
	runtime := filepath.Join(t.TempDir(), "rt")
	project := t.TempDir()

	settings := claudehook.BridgeSettings(bins.hookStop, bins.hookPretool, time.Minute)
	c := claudetest.Start(t, claudetest.Options{Tmux: srv, Session: "bench", Dir: project, ModelURL: model.URL,
		Settings: settings.JSON(), Env: map[string]string{state.EnvRuntimeDir: runtime, state.EnvSession: "bench-1"}})

	ctx := context.Background()
	if err := srv.PasteTextIf(ctx, c.Pane, tmux.Guard{}, "hello SCN_BASH please\nsecond line $(rm -rf ~)"); err != nil {
		t.Fatal(err)
	}
	if err := srv.SendKeys(ctx, c.Pane, tmux.KeyEnter); err != nil {
		t.Fatal(err)
	}

	first := model.WaitRequest(t, 60*time.Second, "the pasted prompt", func(r fakemodel.Request) bool {
		return strings.Contains(r.LastUserText, "SCN_BASH")
	})
	if first.LastUserText != "hello SCN_BASH please\nsecond line $(rm -rf ~)" {
		t.Errorf("model got prompt %q", first.LastUserText)
	}
	model.WaitRequest(t, 60*time.Second, "the Bash tool result", func(r fakemodel.Request) bool {
		return len(r.ToolResults) == 1 && strings.Contains(r.ToolResults[0].Content, "bash-ran")
	})

	store, err := state.OpenStore(runtime)
	if err != nil {
		t.Fatal(err)
	}
	turn := waitTurn(t, store, 60*time.Second)
	if turn.Event != "Stop" || turn.Reply != "First final block.\n\nThe command printed bash-ran." || turn.SessionKey != "bench-1" {
		dumpDiagnostics(t, runtime, store)
		t.Fatalf("recorded turn = %+v", turn)
	}
	sess, err := store.Sessions.Get("bench-1")
	if err != nil || sess.ClaudeSessionID != turn.ClaudeSessionID || sess.TranscriptPath == "" {
		t.Fatalf("session record = %+v, %v", sess, err)
	}
}

func waitTurn(t *testing.T, store *state.Store, timeout time.Duration) state.Turn {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		turns, _ := store.Turns.List()
		for _, turn := range turns {
			return turn
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("no turn recorded by the Stop hook")
	return state.Turn{}
}

// dumpDiagnostics logs the hook log and the end of the transcript.
func dumpDiagnostics(t *testing.T, runtime string, store *state.Store) {
	t.Helper()
	if b, err := os.ReadFile(filepath.Join(runtime, "logs", "hook.log")); err == nil {
		t.Logf("hook.log:\n%s", b)
	}
	sessions, _ := store.Sessions.List()
	for _, s := range sessions {
		if b, err := os.ReadFile(s.TranscriptPath); err == nil {
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			t.Logf("transcript tail:\n%s", strings.Join(lines[max(0, len(lines)-8):], "\n"))
		}
	}
}
