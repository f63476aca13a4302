package hook

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/prompt"
	"github.com/ccbridge/ccbridge/internal/state"
)

// A session of another front end (ccbridge mcp, no Discord server, no
// daemon): its PermissionRequest still waits for an answer, and prints the
// decision that front end makes; its Stop records the turn quietly.
func TestPermissionOfAnotherFrontEnd(t *testing.T) {
	root := filepath.Join(t.TempDir(), "rt")
	store, err := state.OpenStore(root)
	if err != nil {
		t.Fatal(err)
	}
	// ccbridge mcp started it with a prompt_timeout of 7m: Claude kills the
	// hook then, so the request's deadline is no later.
	if _, err := store.Sessions.Update(context.Background(), "mcp@abc", func(s *state.Session) error {
		s.Cwd, s.PromptTimeout = "/nowhere", 7*time.Minute
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	payload := `{"session_id":"sid-m","prompt_id":"pid-m","cwd":"/nowhere","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"touch x"}}`
	type result struct {
		out  string
		code int
	}
	done := make(chan result, 1)
	go func() {
		out, _, code := run(t, PreTool, root, "mcp@abc", payload)
		done <- result{out, code}
	}()
	var id string
	deadline := time.Now().Add(10 * time.Second)
	for id == "" {
		all, _ := store.Requests.List()
		for k, r := range all {
			if r.Status == state.RequestPending && r.Session == "mcp@abc" {
				id = k
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no pending request recorded")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if r, _ := store.Requests.Get(id); r.Server != "" || r.MessageID != "" {
		t.Fatalf("a card for a session with no server: %+v", r)
	} else if d := r.Deadline.Sub(r.Created); d != 7*time.Minute {
		t.Fatalf("the request waits %s, not the session's prompt timeout", d)
	}
	if _, err := prompt.Answer(context.Background(), store.Requests, id, []string{"deny: use echo"}, "an MCP client", "mcp"); err != nil {
		t.Fatal(err)
	}
	var res result
	select {
	case res = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the hook did not return after the decision")
	}
	var out claudehook.PermissionRequestOutput
	if err := json.Unmarshal([]byte(res.out), &out); err != nil || res.code != 0 {
		t.Fatalf("stdout %q, exit %d: %v", res.out, res.code, err)
	}
	if d := out.HookSpecificOutput.Decision; d.Behavior != "deny" || d.Message != "use echo" {
		t.Fatalf("decision = %+v", d)
	}
}
