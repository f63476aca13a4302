package session

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/execx"
	"github.com/ccbridge/ccbridge/internal/state"
)

// failedTurn is a Codex 0.171.0 rollout's task_complete after an HTTP 400
// from the model API (agents.md §1.2): no hook fires for it.
const failedTurn = `{"timestamp":"2026-11-28T14:03:44.694Z","ordinal":19,"type":"event_msg","payload":{"type":"task_complete","root_turn_id":"t2","turn_id":"t2","last_agent_message":null,"error":{"message":"{\"error\":{\"code\":null,\"message\":\"fake bad request\",\"param\":null,\"type\":\"invalid_request_error\"}}\n","codex_error_info":"other"},"duration_ms":100}}` + "\n"

// A busy Codex session whose rollout says its turn ended in an API error
// gets that error through the Stop hook, as the StopFailure Codex never
// fires: once, with the session's own environment and no more of the
// daemon's. A Claude session, an idle one or a turn still running is left
// alone.
func TestCodexTurnErrorRunsTheStopHookOnce(t *testing.T) {
	m, _, store, _ := newManager(t)
	rollout := filepath.Join(t.TempDir(), "rollout.jsonl")
	if err := os.WriteFile(rollout, []byte(`{"type":"event_msg","payload":{"type":"task_started","turn_id":"t2"}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for key, s := range map[string]state.Session{
		"home-api":   {Agent: config.AgentCodex, Busy: true},
		"home-idle":  {Agent: config.AgentCodex},
		"home-other": {Busy: true}, // Claude's: its StopFailure hook fires
	} {
		store.Sessions.Update(ctx, key, func(r *state.Session) error {
			*r = s
			r.ClaudeSessionID, r.LastPromptID, r.TranscriptPath, r.Cwd = "th1", "t2", rollout, "/p"
			return nil
		})
	}
	t.Setenv("CCBRIDGE_E2E_TOKEN_0", "a-bot-token")
	want, _ := json.Marshal(claudehook.Input{HookEventName: claudehook.EventStopFailure, SessionID: "th1", TurnID: "t2", TranscriptPath: rollout, Cwd: "/p",
		LastAssistantMessage: "fake bad request", Error: "invalid_request_error"})
	fake := execx.NewFake(t, execx.Call{Args: []string{"/bin/hs", "--agent=codex"}, Stdin: string(want)})
	m.opt.Hooks = fake
	read := map[string]rolloutRead{}

	m.checkTurnErrors(ctx, read) // still running
	if n := len(fake.Commands()); n != 0 {
		t.Fatalf("%d hooks run for a running turn", n)
	}
	f, _ := os.OpenFile(rollout, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(failedTurn)
	f.Close()
	m.checkTurnErrors(ctx, read)
	m.checkTurnErrors(ctx, read) // the hook has not freed the session yet
	cmds := fake.Commands()
	if len(cmds) != 1 {
		t.Fatalf("hooks run: %v", cmds)
	}
	env := cmds[0].Env
	if !slices.Contains(env, state.EnvSession+"=home-api") || !slices.Contains(env, state.EnvRuntimeDir+"="+store.Dir.Root()) ||
		slices.Contains(env, "CCBRIDGE_E2E_TOKEN_0=a-bot-token") {
		t.Errorf("hook env %q", env)
	}
}
