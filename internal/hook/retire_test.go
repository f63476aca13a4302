package hook

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/state"
)

// pendingRequest stores a pending request as the PermissionRequest hook
// would, for session sid and the given tool and input.
func pendingRequest(t *testing.T, store *state.Store, id, tool, input string, created time.Time) {
	t.Helper()
	req := state.Request{Session: "home-api", ClaudeSessionID: "sid", ToolName: tool, ToolInput: json.RawMessage(input),
		Created: created, Deadline: created.Add(time.Hour), Status: state.RequestPending}
	if _, err := store.Requests.Create(context.Background(), id, req); err != nil {
		t.Fatal(err)
	}
}

func postToolUse(t *testing.T, root, tool, input string) {
	t.Helper()
	run(t, PreTool, root, "home-api", fmt.Sprintf(`{"session_id":"sid","prompt_id":"p","cwd":"/p","hook_event_name":"PostToolUse","tool_name":%q,"tool_input":%s,"tool_use_id":"toolu_x"}`, tool, input))
}

func statuses(t *testing.T, store *state.Store) map[string]string {
	t.Helper()
	all, err := store.Requests.List()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for id, r := range all {
		out[id] = r.Status
	}
	return out
}

// A PostToolUse of another call of the same tool (a parallel or subagent
// Bash that was allowed without a prompt) must not close a pending card.
func TestRetireOnlyTheCallThatRan(t *testing.T) {
	root := filepath.Join(t.TempDir(), "rt")
	store, err := state.OpenStore(root)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	pendingRequest(t, store, "reqa", "Bash", `{"command":"rm -rf build","description":"Clean"}`, now)
	pendingRequest(t, store, "reqb", "Bash", `{"command":"git push","description":"Push"}`, now.Add(time.Second))

	postToolUse(t, root, "Bash", `{"command":"ls","description":"List"}`)
	if got := statuses(t, store); got["reqa"] != state.RequestPending || got["reqb"] != state.RequestPending {
		t.Fatalf("after another call's PostToolUse: %v; want both pending", got)
	}
	// Same command, other description: still another call.
	postToolUse(t, root, "Bash", `{"command":"git push","description":"Other"}`)
	if got := statuses(t, store); got["reqa"] != state.RequestPending || got["reqb"] != state.RequestPending {
		t.Fatalf("after a near-identical call's PostToolUse: %v; want both pending", got)
	}
	// Key order does not matter; the exact input does.
	postToolUse(t, root, "Bash", `{"description":"Push","command":"git push"}`)
	if got := statuses(t, store); got["reqa"] != state.RequestPending || got["reqb"] != state.RequestTerminal {
		t.Fatalf("after the call's own PostToolUse: %v; want reqa pending, reqb terminal", got)
	}
}

// AskUserQuestion answered in the terminal: PostToolUse's tool_input is the
// original input plus answers and annotations (protocol notes §2.3).
func TestRetireQuestionAnsweredInTerminal(t *testing.T) {
	root := filepath.Join(t.TempDir(), "rt")
	store, err := state.OpenStore(root)
	if err != nil {
		t.Fatal(err)
	}
	q := `[{"question":"Which color?","header":"Color","options":[{"label":"Blue","description":"b"}],"multiSelect":false}]`
	pendingRequest(t, store, "reqq", "AskUserQuestion", `{"questions":`+q+`}`, time.Now().UTC())
	postToolUse(t, root, "AskUserQuestion", `{"questions":[{"question":"Other?","header":"X","options":[],"multiSelect":false}],"answers":{"Other?":"x"}}`)
	if got := statuses(t, store); got["reqq"] != state.RequestPending {
		t.Fatalf("another question retired the card: %v", got)
	}
	postToolUse(t, root, "AskUserQuestion", `{"questions":`+q+`,"answers":{"Which color?":"Blue"},"annotations":{}}`)
	if got := statuses(t, store); got["reqq"] != state.RequestTerminal {
		t.Fatalf("answered question not retired: %v", got)
	}
}

// ExitPlanMode: the request holds the plan Claude Code filled in, while
// PostToolUse shows the model's own input, {} (protocol notes §5).
func TestRetirePlanAnsweredInTerminal(t *testing.T) {
	root := filepath.Join(t.TempDir(), "rt")
	store, err := state.OpenStore(root)
	if err != nil {
		t.Fatal(err)
	}
	pendingRequest(t, store, "reqp", "ExitPlanMode", `{"plan":"# Plan\n1. a","planFilePath":"/h/.claude/plans/x.md"}`, time.Now().UTC())
	postToolUse(t, root, "ExitPlanMode", `{}`)
	if got := statuses(t, store); got["reqp"] != state.RequestTerminal {
		t.Fatalf("plan approved in the terminal not retired: %v", got)
	}
}
