package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/state"
)

// policyRig is a runtime dir where the daemon left a project at /proj with
// [policy] rules for its channel, and an audit dir of the test's own.
type policyRig struct {
	root, auditDir string
	store          *state.Store
}

func newPolicyRig(t *testing.T, rules state.PolicyRules) *policyRig {
	t.Helper()
	r := &policyRig{root: filepath.Join(t.TempDir(), "rt"), auditDir: t.TempDir()}
	var err error
	if r.store, err = state.OpenStore(r.root); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := r.store.Routes.Update(ctx, state.RoutesKey, func(rs *state.Routes) error {
		rs.Routes = []state.Route{{Path: "/proj", Server: "home", Project: "api", ChannelID: "c1"}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	pols, err := state.OpenPolicies(r.store.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pols.Update(ctx, state.PoliciesKey, func(p *state.Policies) error {
		p.Scopes = map[string]state.PolicyRules{state.PolicyScope("home", "api", ""): rules}
		p.AuditDir = r.auditDir
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return r
}

// session records a session as ccbridge mcp leaves it: no server, no
// project, only where it runs.
func (r *policyRig) mcpSession(t *testing.T, key, cwd string) {
	t.Helper()
	if _, err := r.store.Sessions.Update(context.Background(), key, func(s *state.Session) error { s.Cwd = cwd; return nil }); err != nil {
		t.Fatal(err)
	}
}

func bashCall(cwd, command string) string {
	in, _ := json.Marshal(map[string]any{"session_id": "sid", "prompt_id": "pid", "cwd": cwd, "hook_event_name": "PreToolUse",
		"tool_name": "Bash", "tool_input": map[string]string{"command": command}, "tool_use_id": "toolu_1"})
	return string(in)
}

// enforce runs the synchronous policy hook and returns what it printed.
func (r *policyRig) enforce(t *testing.T, session, stdin string, stdout io.Writer) {
	t.Helper()
	env := map[string]string{state.EnvRuntimeDir: r.root, state.EnvSession: session}
	var errb bytes.Buffer
	if code := Main(context.Background(), PreTool, []string{claudehook.PolicyFlag}, strings.NewReader(stdin), stdout, &errb,
		func(k string) string { return env[k] }); code != 0 {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
}

func decision(t *testing.T, out string) claudehook.PreToolUseDecision {
	t.Helper()
	if out == "" {
		return claudehook.PreToolUseDecision{}
	}
	var o claudehook.PreToolUseOutput
	if err := json.Unmarshal([]byte(out), &o); err != nil {
		t.Fatalf("stdout %q: %v", out, err)
	}
	return o.HookSpecificOutput
}

// A session ccbridge mcp started has no server or project of its own; in a
// project's directory that project's rules still hold.
func TestPolicyHoldsForAnotherFrontEndsSession(t *testing.T) {
	r := newPolicyRig(t, state.PolicyRules{Deny: []string{"Bash(git push *)"}})
	r.mcpSession(t, "mcp@x", "/proj/sub")
	var out bytes.Buffer
	r.enforce(t, "mcp@x", bashCall("/proj/sub", "git push origin main"), &out)
	if d := decision(t, out.String()); d.PermissionDecision != "deny" || !strings.Contains(d.PermissionDecisionReason, "Bash(git push *)") {
		t.Fatalf("decision = %+v; want deny by Bash(git push *)", d)
	}
	// Outside every project there is nothing to apply.
	r.mcpSession(t, "mcp@y", "/elsewhere")
	out.Reset()
	r.enforce(t, "mcp@y", bashCall("/elsewhere", "git push origin main"), &out)
	if out.Len() != 0 {
		t.Fatalf("stdout %q for a session in no project", out.String())
	}
}

// The card of such a session names the ask rule that raised it.
func TestAskRuleOfAnotherFrontEndsSession(t *testing.T) {
	r := newPolicyRig(t, state.PolicyRules{Ask: []string{"Bash(git push *)"}})
	pols, _ := state.OpenPolicies(r.store.Dir)
	p, err := pols.Get(state.PoliciesKey)
	if err != nil {
		t.Fatal(err)
	}
	h := &handler{store: r.store, log: slog.New(slog.DiscardHandler), session: "mcp@x", policies: p}
	in := &claudehook.Input{Cwd: "/proj/sub", ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"git push origin main"}`)}
	if got := h.askRule(in, state.Session{Cwd: "/proj/sub"}); got != "Bash(git push *)" {
		t.Fatalf("askRule = %q", got)
	}
}
