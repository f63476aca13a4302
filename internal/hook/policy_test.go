package hook

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/audit"
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

// A session record that cannot be read does not turn the rules off: the
// project that holds the cwd still decides, and where none does, a person
// is asked.
func TestPolicyHoldsWhenTheSessionRecordIsMissing(t *testing.T) {
	r := newPolicyRig(t, state.PolicyRules{Deny: []string{"Bash(git push *)"}})
	var out bytes.Buffer
	r.enforce(t, "home-gone", bashCall("/proj", "git push origin main"), &out)
	if d := decision(t, out.String()); d.PermissionDecision != "deny" {
		t.Fatalf("decision = %+v; want deny", d)
	}
	out.Reset()
	r.enforce(t, "home-gone", bashCall("/somewhere/else", "ls"), &out)
	if d := decision(t, out.String()); d.PermissionDecision != "ask" {
		t.Fatalf("decision = %+v; want ask", d)
	}
}

// The daemon writes a scope for every project, empty when the config has
// no [policy] rules: with none anywhere, an unreadable session record
// outside every project asks nothing.
func TestNoRulesAnywhereAskNothing(t *testing.T) {
	r := newPolicyRig(t, state.PolicyRules{})
	var out bytes.Buffer
	r.enforce(t, "home-gone", bashCall("/somewhere/else", "ls"), &out)
	if out.Len() != 0 {
		t.Fatalf("stdout %q with no rules configured", out.String())
	}
}

// A hand-started Claude that a thread took over follows the thread's
// rules, not only its project channel's.
func TestTakenOverClaudeFollowsTheThreadsRules(t *testing.T) {
	r := newPolicyRig(t, state.PolicyRules{})
	ctx := context.Background()
	pols, _ := state.OpenPolicies(r.store.Dir)
	if _, err := pols.Update(ctx, state.PoliciesKey, func(p *state.Policies) error {
		p.Scopes[state.PolicyScope("home", "api", "555")] = state.PolicyRules{Deny: []string{"Bash(git push *)"}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	key := "home-api-t555"
	r.store.Sessions.Update(ctx, key, func(s *state.Session) error {
		s.Server, s.Project, s.ChannelID, s.ThreadID, s.Cwd = "home", "api", "c1", "555", "/proj"
		return nil
	})
	r.store.Live.Update(ctx, "sid", func(l *state.Live) error {
		l.ClaudeSessionID, l.Server, l.Project, l.ChannelID, l.Cwd, l.Bound = "sid", "home", "api", "c1", "/proj", key
		return nil
	})
	env := map[string]string{state.EnvRuntimeDir: r.root}
	var out, errb bytes.Buffer
	Main(ctx, PreTool, []string{claudehook.PolicyFlag, claudehook.GlobalFlag}, strings.NewReader(bashCall("/proj", "git push origin main")), &out, &errb,
		func(k string) string { return env[k] })
	if d := decision(t, out.String()); d.PermissionDecision != "deny" || !strings.Contains(d.PermissionDecisionReason, "Bash(git push *)") {
		t.Fatalf("decision = %+v (stderr %q); want deny by the thread's Bash(git push *)", d, errb.String())
	}
}

// lockAudit holds the audit log's lock in dir, as a stuck writer would,
// until the returned function is called (or the test ends).
func lockAudit(t *testing.T, dir string) (unlock func()) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, audit.File+".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
}

// Claude lets a synchronous hook run for its timeout, then kills it and
// runs the tool: the decision must not wait for the audit log's lock.
func TestPolicyDecisionDoesNotWaitForTheAuditLock(t *testing.T) {
	r := newPolicyRig(t, state.PolicyRules{Deny: []string{"Bash(rm -rf *)"}})
	ctx := context.Background()
	r.store.Sessions.Update(ctx, "home-api", func(s *state.Session) error { s.Server, s.Project, s.Cwd = "home", "api", "/proj"; return nil })
	unlock := lockAudit(t, r.auditDir)
	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.enforce(t, "home-api", bashCall("/proj", "rm -rf build"), pw)
		pw.Close()
	}()
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(pr).ReadString('\n')
		line <- s
		io.Copy(io.Discard, pr)
	}()
	select {
	case s := <-line:
		if d := decision(t, s); d.PermissionDecision != "deny" {
			t.Fatalf("decision = %+v; want deny", d)
		}
	case <-time.After(time.Second):
		t.Fatal("no decision within 1 s while the audit log is locked")
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the hook still runs 5 s later: it waits for the audit lock")
	}
	unlock()
	log, _ := os.ReadFile(filepath.Join(r.root, "logs", "hook.log"))
	if !strings.Contains(string(log), `"msg":"audit"`) {
		t.Errorf("the lost audit record is not logged:\n%s", log)
	}
}

// The audit log keeps what was refused, with its secrets masked.
func TestPolicyAuditIsRedacted(t *testing.T) {
	r := newPolicyRig(t, state.PolicyRules{Deny: []string{"Bash(curl *)"}})
	r.mcpSession(t, "mcp@x", "/proj")
	token := "M" + strings.Repeat("T", 25) + ".Gh1abc." + strings.Repeat("x", 30)
	var out bytes.Buffer
	r.enforce(t, "mcp@x", bashCall("/proj", "curl -H 'Authorization: Bot "+token+"' 'https://x/?password=hunter2'"), &out)
	if d := decision(t, out.String()); d.PermissionDecision != "deny" {
		t.Fatalf("decision = %+v; want deny", d)
	}
	b, err := os.ReadFile(filepath.Join(r.auditDir, audit.File))
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"hunter2", token} {
		if strings.Contains(string(b), secret) {
			t.Errorf("the audit log keeps %q:\n%s", secret, b)
		}
	}
	if !strings.Contains(string(b), `"asked":"Bash: curl -H`) {
		t.Errorf("the call is not logged:\n%s", b)
	}
}
