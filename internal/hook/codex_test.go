package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/codexhook"
	"github.com/ccbridge/ccbridge/internal/state"
)

// runCodex runs a hook as Codex does: its payload, and the flag ccbridge
// puts on the command lines it registers for Codex.
func runCodex(t *testing.T, prog Program, root, session, stdin string) {
	t.Helper()
	env := map[string]string{state.EnvRuntimeDir: root, state.EnvSession: session}
	var out, errb bytes.Buffer
	if code := Main(context.Background(), prog, []string{codexhook.AgentFlag}, strings.NewReader(stdin), &out, &errb, func(k string) string { return env[k] }); code != 0 || out.Len() != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}

// Codex's payloads (agents.md §1.3.2) carry turn_id where Claude's carry
// prompt_id: the turn is claimed by it, and the reply is every message the
// model wrote after its last tool call, read from the rollout (the payload
// has only the last one).
func TestCodexStopRecordsEveryMessageOfTheReply(t *testing.T) {
	root := filepath.Join(t.TempDir(), "rt")
	rollout, _ := filepath.Abs(filepath.Join("..", "codexhook", "testdata", "rollout.jsonl"))
	runCodex(t, Stop, root, "home-web", `{"session_id":"s1","turn_id":"t1","transcript_path":"`+rollout+
		`","cwd":"/p","hook_event_name":"Stop","model":"gpt-fake","permission_mode":"default","stop_hook_active":false,"last_assistant_message":"Done."}`)
	store, err := state.OpenStore(root)
	if err != nil {
		t.Fatal(err)
	}
	turn, err := store.Turns.Get(state.TurnKey("s1", "t1"))
	if err != nil || turn.Reply != "probe reply one\n\nDone." || turn.SessionKey != "home-web" {
		t.Fatalf("turn %+v, %v", turn, err)
	}
	sess, _ := store.Sessions.Get("home-web")
	if sess.ClaudeSessionID != "s1" || sess.TranscriptPath != rollout || sess.LastPromptID != "t1" {
		t.Errorf("session %+v", sess)
	}
}

// A message injected as a Codex reply lands continues the turn (agents.md
// §1.7), and the Stop that ends its reply carries the turn_id already
// recorded (issue 29): that reply is posted too, and only it. A repeated
// Stop, of either reply and even after the rollout went on, posts nothing.
func TestCodexInjectedMessageGetsItsOwnReplyOnce(t *testing.T) {
	r := newRelay(t)
	lines, err := os.ReadFile(filepath.Join("..", "codexhook", "testdata", "rollout-injected.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	all := strings.SplitAfter(string(lines), "\n")
	rollout := filepath.Join(t.TempDir(), "rollout.jsonl")
	stop := func(last string) {
		t.Helper()
		runCodex(t, Stop, r.root, "home-api", `{"session_id":"s1","turn_id":"t9","transcript_path":"`+rollout+
			`","cwd":"/p","hook_event_name":"Stop","model":"gpt-fake","permission_mode":"default","stop_hook_active":false,"last_assistant_message":"`+last+`"}`)
	}
	// Probe 9's reply is in the rollout, probe 10 not injected yet.
	if err := os.WriteFile(rollout, []byte(strings.Join(all[:4], "")), 0o600); err != nil {
		t.Fatal(err)
	}
	stop("ok: latency probe 9")
	// Probe 10 is injected, and its reply reaches the rollout only after
	// its Stop fired: the hook waits for it rather than take it for the
	// first reply again.
	if err := os.WriteFile(rollout, []byte(strings.Join(all[:5], "")), 0o600); err != nil {
		t.Fatal(err)
	}
	wrote := make(chan error, 1)
	go func() {
		time.Sleep(200 * time.Millisecond)
		wrote <- os.WriteFile(rollout, lines, 0o600)
	}()
	stop("ok: latency probe 10")
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	want := []string{"ok: latency probe 9", "Looking.\n\nok: latency probe 10"}
	if got := r.contents(); !reflect.DeepEqual(got, want) {
		t.Fatalf("posted %q, want %q", got, want)
	}
	// What reads the session's last turn (MCP's claude_status, a thread's
	// wait for its reply) finds this reply, not the one before.
	sess, _ := r.store.Sessions.Get("home-api")
	turn, err := r.store.Turns.Get(state.TurnKey(sess.ClaudeSessionID, sess.LastPromptID))
	if err != nil || turn.Reply != want[1] {
		t.Errorf("last turn %q: %+v, %v", sess.LastPromptID, turn, err)
	}
	stop("ok: latency probe 10")
	stop("ok: latency probe 9")
	if got := r.contents(); !reflect.DeepEqual(got, want) {
		t.Fatalf("posted %q, want %q", got, want)
	}
}

// One Stop may end two replies of a Codex turn, the message injected
// before the first had a Stop: both go out together, once, as before.
func TestCodexOneStopForTwoRepliesPostsBoth(t *testing.T) {
	r := newRelay(t)
	rollout, _ := filepath.Abs(filepath.Join("..", "codexhook", "testdata", "rollout-injected.jsonl"))
	payload := `{"session_id":"s1","turn_id":"t9","transcript_path":"` + rollout +
		`","cwd":"/p","hook_event_name":"Stop","model":"gpt-fake","permission_mode":"default","stop_hook_active":false,"last_assistant_message":"ok: latency probe 10"}`
	runCodex(t, Stop, r.root, "home-api", payload)
	runCodex(t, Stop, r.root, "home-api", payload)
	want := []string{"ok: latency probe 9\n\nLooking.\n\nok: latency probe 10"}
	if got := r.contents(); !reflect.DeepEqual(got, want) {
		t.Fatalf("posted %q, want %q", got, want)
	}
}

// The receipt comes from UserPromptSubmit, and Codex's Interrupt (an
// Escape ended the turn; no Stop follows) says the session is idle again.
func TestCodexPromptThenInterrupt(t *testing.T) {
	root := filepath.Join(t.TempDir(), "rt")
	base := `{"session_id":"s1","turn_id":"t7","transcript_path":"/nowhere/rollout.jsonl","cwd":"/p","model":"gpt-fake","permission_mode":"default",`
	runCodex(t, Stop, root, "home-web", base+`"hook_event_name":"UserPromptSubmit","prompt":"hello codex"}`)
	store, _ := state.OpenStore(root)
	sess, _ := store.Sessions.Get("home-web")
	if !sess.Busy || len(sess.Prompts) != 1 || sess.Prompts[0].Text != "hello codex" || sess.LastPromptID != "t7" {
		t.Fatalf("after UserPromptSubmit: %+v", sess)
	}
	runCodex(t, Stop, root, "home-web", base+`"hook_event_name":"Interrupt"}`)
	sess, _ = store.Sessions.Get("home-web")
	if sess.Busy || sess.LastEvent != codexhook.EventInterrupt {
		t.Fatalf("after Interrupt: %+v", sess)
	}
}

// A Codex reply's footer: the model and context of the rollout's last
// token_count. Codex reports no cost, and the footer says so rather than
// showing none or inventing one.
func TestCodexFooterFromTheRollout(t *testing.T) {
	store, err := state.OpenStore(filepath.Join(t.TempDir(), "rt"))
	if err != nil {
		t.Fatal(err)
	}
	rollout, _ := filepath.Abs(filepath.Join("..", "codexhook", "testdata", "rollout.jsonl"))
	h := &handler{store: store, log: slog.New(slog.DiscardHandler)}
	line, own := h.footer(state.Session{Agent: "codex", TranscriptPath: rollout}, state.Turn{ClaudeSessionID: "s1", PromptID: "t1"})
	if line != "-# gpt-fake · ctx 20% · no cost: Codex reports none" || !own {
		t.Errorf("footer %q, %v", line, own)
	}
}

// Codex fails closed on a PermissionRequest answer with more than allow or
// deny and its message: the rest is left out for Codex, kept for Claude.
func TestDecisionForCodexIsAllowOrDenyOnly(t *testing.T) {
	d := claudehook.Decision{Behavior: "allow", Message: "m", Interrupt: true, UpdatedInput: []byte(`{"command":"x"}`),
		UpdatedPermissions: []claudehook.PermissionUpdate{{Type: "addRules"}}}
	log := slog.New(slog.DiscardHandler)
	if got := decisionFor(&claudehook.Input{Agent: agentCodex}, d, log); !reflect.DeepEqual(got, claudehook.Decision{Behavior: "allow", Message: "m"}) {
		t.Errorf("Codex: %+v", got)
	}
	if got := decisionFor(&claudehook.Input{}, d, log); !reflect.DeepEqual(got, d) {
		t.Errorf("Claude: %+v", got)
	}
}

// The [policy] holds in a Codex session too, through its synchronous
// PreToolUse hook. Codex takes deny with a reason there, but cannot ask
// from a hook ("ask" is unsupported and would let the call run): an ask
// rule refuses the call, saying why.
func TestCodexPolicyRefusesWhatItWouldAsk(t *testing.T) {
	root := filepath.Join(t.TempDir(), "rt")
	rules := claudehook.SessionPolicy{Ask: []string{"Bash(rm *)"}, Deny: []string{"Bash(curl *)"}, AuditDir: t.TempDir()}
	env := map[string]string{state.EnvRuntimeDir: root, state.EnvSession: "home-web"}
	decide := func(command string) (claudehook.PreToolUseDecision, bool) {
		var out, errb bytes.Buffer
		payload := `{"session_id":"s1","turn_id":"t1","transcript_path":"/r.jsonl","cwd":"/p","hook_event_name":"PreToolUse","model":"gpt-fake",` +
			`"permission_mode":"default","tool_name":"Bash","tool_input":{"command":"` + command + `"},"tool_use_id":"call_1"}`
		Main(context.Background(), PreTool, []string{claudehook.PolicyFlag, codexhook.AgentFlag, rules.Arg()}, strings.NewReader(payload), &out, &errb,
			func(k string) string { return env[k] })
		if out.Len() == 0 {
			return claudehook.PreToolUseDecision{}, false
		}
		var o claudehook.PreToolUseOutput
		if err := json.Unmarshal(out.Bytes(), &o); err != nil {
			t.Fatalf("%q: %v", out.String(), err)
		}
		return o.HookSpecificOutput, true
	}
	if d, ok := decide("rm -rf build"); !ok || d.PermissionDecision != "deny" || !strings.Contains(d.PermissionDecisionReason, "rule Bash(rm *) asks for confirmation") ||
		!strings.Contains(d.PermissionDecisionReason, "Codex cannot ask") {
		t.Errorf("ask rule: %+v, %v", d, ok)
	}
	if d, ok := decide("curl example.com"); !ok || d.PermissionDecision != "deny" || !strings.Contains(d.PermissionDecisionReason, "denied by rule Bash(curl *)") {
		t.Errorf("deny rule: %+v, %v", d, ok)
	}
	if d, ok := decide("ls"); ok {
		t.Errorf("no rule: %+v", d)
	}
}
