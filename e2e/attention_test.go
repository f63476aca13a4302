//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"math"
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

// waitUntil polls cond until it holds or timeout passes.
func waitUntil(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestRealClaudeRunsOurStatusLineAndTheUsersOwn: Claude Code 2.1.328 runs
// the statusLine ccbridge registers; it caches the figures the fake API's
// usage implies; the user's own statusLine keeps printing in the terminal,
// fed the same input.
func TestRealClaudeRunsOurStatusLineAndTheUsersOwn(t *testing.T) {
	t.Parallel()
	model := fakemodel.New(t)
	// 84,000 tokens in context on the last request.
	model.SetUsage(&fakemodel.Usage{InputTokens: 2000, CacheCreationInputTokens: 12000, CacheReadInputTokens: 70000, OutputTokens: 40})
	srv := tmuxtest.New(t)
	runtime := filepath.Join(t.TempDir(), "rt")
	project := t.TempDir()
	settings := claudehook.BridgeSettings(bins.hookStop, bins.hookPretool, time.Minute)
	c := claudetest.Start(t, claudetest.Options{Tmux: srv, Session: "sl", Dir: project, ModelURL: model.URL,
		Settings: settings.JSON(), Env: map[string]string{state.EnvRuntimeDir: runtime, state.EnvSession: "sl-1"}})

	// The user's own statusLine, in their settings (read on every call).
	dump := filepath.Join(t.TempDir(), "statusline-input.json")
	script := filepath.Join(t.TempDir(), "my-statusline.sh")
	os.WriteFile(script, []byte("#!/bin/sh\ncat > '"+dump+"'\necho \"USER-STATUSLINE-OK\"\n"), 0o755)
	os.MkdirAll(filepath.Join(c.Home, ".claude"), 0o700)
	os.WriteFile(filepath.Join(c.Home, ".claude", "settings.json"), []byte(`{"statusLine":{"type":"command","command":"`+script+`"}}`), 0o600)

	ctx := context.Background()
	if err := srv.PasteText(ctx, c.Pane, "hello statusline"); err != nil {
		t.Fatal(err)
	}
	if err := srv.SendKeys(ctx, c.Pane, tmux.KeyEnter); err != nil {
		t.Fatal(err)
	}
	store, err := state.OpenStore(runtime)
	if err != nil {
		t.Fatal(err)
	}
	turn := waitTurn(t, store, 60*time.Second)
	statuses, err := state.OpenStatuses(store.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var st state.Status
	waitUntil(t, 30*time.Second, "the statusLine of the turn", func() bool {
		st, err = statuses.Get(turn.ClaudeSessionID)
		return err == nil && st.PromptID == turn.PromptID && st.HasContext
	})
	raw, err := os.ReadFile(dump)
	if err != nil {
		t.Fatalf("the user's statusLine never ran: %v", err)
	}
	t.Logf("statusLine input of 2.1.328: %s", raw)
	var in struct {
		SessionID string `json:"session_id"`
		Model     struct {
			DisplayName string `json:"display_name"`
		} `json:"model"`
		ContextWindow struct {
			Size int `json:"context_window_size"`
		} `json:"context_window"`
	}
	if err := json.Unmarshal(raw, &in); err != nil || in.ContextWindow.Size == 0 {
		t.Fatalf("statusLine input %s: %v", raw, err)
	}
	want := 100 * 84000 / float64(in.ContextWindow.Size)
	if st.Model == "" || st.Model != in.Model.DisplayName || math.Abs(st.ContextPct-want) > 0.01 || st.CostUSD <= 0 || st.SessionKey != "sl-1" {
		t.Errorf("cached status %+v; want model %q, context %.2f%%", st, in.Model.DisplayName, want)
	}
	waitUntil(t, 30*time.Second, "the user's statusLine on the screen", func() bool {
		screen, _ := srv.Capture(ctx, c.Pane, 0)
		return strings.Contains(screen, "USER-STATUSLINE-OK")
	})
}
