package hook

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/state"
)

// Codex's PermissionRequest hook posts the card and returns at once with
// no decision, so Codex shows its own dialog (agents.md §1.3.4): the
// request is one the daemon answers by keys, with no hook to wait on it.
func TestCodexPermissionReturnsAtOnceAnsweredByKeys(t *testing.T) {
	r := newRelay(t)
	r.store.Bots.Update(context.Background(), "home", func(b *state.Bot) error { b.Instance = "inst1"; return nil })
	start := time.Now()
	runCodex(t, PreTool, r.root, "home-api", `{"session_id":"s1","turn_id":"t1","cwd":"/p","hook_event_name":"PermissionRequest","model":"gpt-fake",`+
		`"tool_name":"Bash","tool_input":{"command":"touch /tmp/x","description":"Create a file outside?"}}`)
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the hook took %s", d)
	}
	all, err := r.store.Requests.List()
	if err != nil || len(all) != 1 {
		t.Fatalf("requests %v, %v", all, err)
	}
	for _, req := range all {
		if req.Keys != "codex" || req.HookPID != 0 || req.Status != state.RequestPending || req.MessageID == "" {
			t.Errorf("request %+v", req)
		}
	}
	if c := r.contents(); len(c) != 1 || !strings.Contains(c[0], "don't ask again") {
		t.Errorf("posted %q", c)
	}
}

// The card of a keyed request answered in the terminal is retired: its
// PostToolUse (Yes), though Codex's carries no description, or its
// Interrupt (No ends the turn). Another session's card is left alone.
func TestCodexKeyedCardRetiredByTheTerminal(t *testing.T) {
	r := newRelay(t)
	ctx := context.Background()
	keyed := func(id, sid, cmd string) {
		req := state.Request{Session: "home-api", ClaudeSessionID: sid, ToolName: "Bash", Keys: "codex", Created: time.Now(), Deadline: time.Now().Add(time.Hour),
			ToolInput: json.RawMessage(`{"command":"` + cmd + `","description":"why"}`), Status: state.RequestPending}
		if _, err := r.store.Requests.Create(ctx, id, req); err != nil {
			t.Fatal(err)
		}
	}
	keyed("ran", "s1", "touch a")
	keyed("other", "s1", "touch b")
	keyed("elsewhere", "s2", "touch b")
	runCodex(t, PreTool, r.root, "home-api", `{"session_id":"s1","turn_id":"t1","cwd":"/p","hook_event_name":"PostToolUse","tool_name":"Bash",`+
		`"tool_input":{"command":"touch a"},"tool_response":"","tool_use_id":"call_1"}`)
	if got := statuses(t, r.store); got["ran"] != state.RequestTerminal || got["other"] != state.RequestPending {
		t.Fatalf("after PostToolUse: %v", got)
	}
	runCodex(t, Stop, r.root, "home-api", `{"session_id":"s1","turn_id":"t1","cwd":"/p","hook_event_name":"Interrupt","permission_mode":"default"}`)
	if got := statuses(t, r.store); got["other"] != state.RequestInterrupted || got["elsewhere"] != state.RequestPending || got["ran"] != state.RequestTerminal {
		t.Fatalf("after Interrupt: %v", got)
	}
}

// Codex's question (its PreToolUse of request_user_input) is posted as a
// question card answered by keys, and the hook returns at once; its
// PostToolUse (answered in the terminal) retires the card.
func TestCodexQuestionPostsAKeyedQuestionCard(t *testing.T) {
	r := newRelay(t)
	r.store.Bots.Update(context.Background(), "home", func(b *state.Bot) error { b.Instance = "inst1"; return nil })
	input := `{"questions":[{"id":"color","header":"Color","question":"Which color do you prefer?","options":[{"label":"Red","description":"The color red"}]}]}`
	runCodex(t, PreTool, r.root, "home-api", `{"session_id":"s1","turn_id":"t1","cwd":"/p","hook_event_name":"PreToolUse","model":"gpt-fake",`+
		`"tool_name":"request_user_input","tool_input":`+input+`,"tool_use_id":"call_q"}`)
	all, _ := r.store.Requests.List()
	if len(all) != 1 {
		t.Fatalf("requests %v", all)
	}
	for _, req := range all {
		if req.ToolName != "AskUserQuestion" || req.Keys != "codex" || req.MessageID == "" {
			t.Fatalf("request %+v", req)
		}
	}
	runCodex(t, PreTool, r.root, "home-api", `{"session_id":"s1","turn_id":"t1","cwd":"/p","hook_event_name":"PostToolUse","tool_name":"request_user_input",`+
		`"tool_input":`+input+`,"tool_response":"{}","tool_use_id":"call_q"}`)
	for id, st := range statuses(t, r.store) {
		if st != state.RequestTerminal {
			t.Errorf("%s: %s after the terminal answered", id, st)
		}
	}
}

// A Codex turn that proposed a plan (the rollout's Plan item) gets a plan
// card answered by keys after its reply; the next prompt reaching Codex
// means the dialog was answered in the terminal, and retires it.
func TestCodexPlanPostsAKeyedPlanCard(t *testing.T) {
	r := newRelay(t)
	r.store.Bots.Update(context.Background(), "home", func(b *state.Bot) error { b.Instance = "inst1"; return nil })
	rollout := filepath.Join(t.TempDir(), "rollout.jsonl")
	lines := `{"type":"event_msg","payload":{"type":"item_completed","turn_id":"t1","item":{"type":"UserMessage","content":[{"type":"text","text":"plan it"}]}}}
{"type":"event_msg","payload":{"type":"item_completed","turn_id":"t1","item":{"type":"Plan","id":"p1","text":"1. Do A\n2. Do B\n"}}}
{"type":"event_msg","payload":{"type":"item_completed","turn_id":"t1","item":{"type":"AgentMessage","content":[{"type":"text","text":"Here is the plan.\n\n"}]}}}
`
	if err := os.WriteFile(rollout, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	runCodex(t, Stop, r.root, "home-api", `{"session_id":"s1","turn_id":"t1","transcript_path":"`+rollout+
		`","cwd":"/p","hook_event_name":"Stop","model":"gpt-fake","permission_mode":"default","stop_hook_active":false,"last_assistant_message":"Here is the plan.\n\n"}`)
	all, _ := r.store.Requests.List()
	if len(all) != 1 {
		t.Fatalf("requests %v", all)
	}
	for _, req := range all {
		if req.ToolName != "ExitPlanMode" || req.Keys != "codex" || req.MessageID == "" || !strings.Contains(string(req.ToolInput), "Do A") {
			t.Fatalf("request %+v", req)
		}
	}
	runCodex(t, Stop, r.root, "home-api", `{"session_id":"s1","turn_id":"t2","cwd":"/p","hook_event_name":"UserPromptSubmit","model":"gpt-fake","permission_mode":"default","prompt":"Implement the plan."}`)
	for id, st := range statuses(t, r.store) {
		if st != state.RequestTerminal {
			t.Errorf("%s: %s after a prompt reached Codex", id, st)
		}
	}
}
