package hook

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
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

// A decision from Discord (or another front end) reaches Claude at once:
// the audit record, which may wait seconds for its lock, comes after it.
func TestPermissionDecisionDoesNotWaitForTheAuditLock(t *testing.T) {
	r := newPolicyRig(t, state.PolicyRules{})
	r.mcpSession(t, "mcp@abc", "/nowhere")
	unlock := lockAudit(t, r.auditDir)
	defer unlock()
	payload := `{"session_id":"sid-m","prompt_id":"pid-m","cwd":"/nowhere","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"touch x"}}`
	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		env := map[string]string{state.EnvRuntimeDir: r.root, state.EnvSession: "mcp@abc"}
		Main(context.Background(), PreTool, nil, strings.NewReader(payload), pw, io.Discard, func(k string) string { return env[k] })
		pw.Close()
	}()
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(pr).ReadString('\n')
		line <- s
		io.Copy(io.Discard, pr)
	}()
	id := pendingID(t, r.store, "mcp@abc")
	if _, err := prompt.Answer(context.Background(), r.store.Requests, id, []string{"allow"}, "an MCP client", "mcp"); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-line:
		var out claudehook.PermissionRequestOutput
		if err := json.Unmarshal([]byte(s), &out); err != nil || out.HookSpecificOutput.Decision.Behavior != "allow" {
			t.Fatalf("stdout %q: %v", s, err)
		}
	case <-time.After(time.Second):
		t.Fatal("no decision within 1 s while the audit log is locked")
	}
	unlock()
	<-done
}

// pendingID waits for the session's pending request and returns its id.
func pendingID(t *testing.T, store *state.Store, session string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		all, _ := store.Requests.List()
		for k, r := range all {
			if r.Status == state.RequestPending && r.Session == session {
				return k
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no pending request recorded")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
