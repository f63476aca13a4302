package hook

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/state"
)

// channelSession records the session of the project's channel, as the
// daemon does, with the Claude it started.
func (r *policyRig) channelSession(t *testing.T, key, claudeSession string) {
	t.Helper()
	if _, err := r.store.Sessions.Update(context.Background(), key, func(s *state.Session) error {
		s.Server, s.Project, s.ChannelID, s.Cwd, s.ClaudeSessionID = "home", "api", "c1", "/proj", claudeSession
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// run runs the policy hook with args and env and returns its decision.
func (r *policyRig) run(t *testing.T, args []string, env map[string]string, stdin string) claudehook.PreToolUseDecision {
	t.Helper()
	var out, errb bytes.Buffer
	if code := Main(context.Background(), PreTool, args, strings.NewReader(stdin), &out, &errb, func(k string) string { return env[k] }); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	return decision(t, out.String())
}

// The model rewrites, corrupts or removes the policy record (review 2,
// finding 6a): the hook of a session with rules asks instead of letting
// every call through, and never moves the record aside.
func TestReviewModelRemovesThePolicyRecord(t *testing.T) {
	r := newPolicyRig(t, state.PolicyRules{Deny: []string{"Bash(rm -rf *)"}})
	r.channelSession(t, "home-api", "sid")
	env := map[string]string{state.EnvRuntimeDir: r.root, state.EnvSession: "home-api"}
	args := []string{claudehook.PolicyFlag}
	call := bashCall("/proj", "rm -rf build")
	if d := r.run(t, args, env, call); d.PermissionDecision != "deny" {
		t.Fatalf("before: %+v", d)
	}
	rec := filepath.Join(r.root, "policies", "policies.json")
	for name, spoil := range map[string]func() error{
		"corrupt":       func() error { return os.WriteFile(rec, []byte("x"), 0o600) },
		"other version": func() error { return os.WriteFile(rec, []byte(`{"version":99,"data":{}}`), 0o600) },
		"removed":       func() error { return os.Remove(rec) },
	} {
		if err := spoil(); err != nil {
			t.Fatal(err)
		}
		d := r.run(t, args, env, call)
		if d.PermissionDecision != "ask" || !strings.Contains(d.PermissionDecisionReason, "policy record cannot be read") {
			t.Errorf("%s record: %+v; want ask", name, d)
		}
		if name != "removed" {
			if _, err := os.Stat(rec); err != nil {
				t.Errorf("%s record moved aside: %v", name, err)
			}
		}
	}
}

// A session ccbridge started has its rules on its hooks' command lines:
// a record rewritten with no rules at all changes nothing.
func TestRulesOnTheCommandLineOutlastARewrittenRecord(t *testing.T) {
	r := newPolicyRig(t, state.PolicyRules{Deny: []string{"Bash(rm -rf *)"}})
	r.channelSession(t, "home-api", "sid")
	pols, _ := state.OpenPolicies(r.store.Dir)
	if _, err := pols.Update(context.Background(), state.PoliciesKey, func(p *state.Policies) error { p.Scopes = nil; return nil }); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{state.EnvRuntimeDir: r.root, state.EnvSession: "home-api"}
	args := []string{claudehook.PolicyFlag, claudehook.RulesFlag + `{"deny":["Bash(rm -rf *)"]}`}
	if d := r.run(t, args, env, bashCall("/proj", "rm -fr build")); d.PermissionDecision != "deny" || !strings.Contains(d.PermissionDecisionReason, "Bash(rm -rf *)") {
		t.Fatalf("decision = %+v; want deny", d)
	}
	// Even with the runtime directory gone.
	env[state.EnvRuntimeDir] = filepath.Join(t.TempDir(), "gone", "rt")
	os.WriteFile(filepath.Dir(env[state.EnvRuntimeDir]), []byte("a file, not a dir"), 0o600)
	if d := r.run(t, args, env, bashCall("/proj", "rm -rf build")); d.PermissionDecision != "deny" {
		t.Fatalf("without a runtime dir: %+v; want deny", d)
	}
	if d := r.run(t, []string{claudehook.PolicyFlag}, env, bashCall("/proj", "ls")); d.PermissionDecision != "ask" {
		t.Fatalf("a ccbridge session without a runtime dir or rules: %+v; want ask", d)
	}
	if d := r.run(t, []string{claudehook.PolicyFlag, claudehook.RulesFlag + "{"}, env, bashCall("/proj", "ls")); d.PermissionDecision != "ask" {
		t.Fatalf("undecodable rules: %+v; want ask", d)
	}
}

// A claude the model starts from a governed session's shell inherits
// CCBRIDGE_SESSION but none of its settings (review 2, finding 6c): the
// global policy hook governs it with that session's rules, and steps
// aside only for the Claude ccbridge started.
func TestReviewNestedClaudeEscapesThePolicy(t *testing.T) {
	r := newPolicyRig(t, state.PolicyRules{Deny: []string{"Bash(rm -rf *)"}})
	r.channelSession(t, "home-api", "parent-sid")
	env := map[string]string{state.EnvRuntimeDir: r.root, state.EnvSession: "home-api"}
	args := []string{claudehook.PolicyFlag, claudehook.GlobalFlag}
	nested := strings.Replace(bashCall("/proj", "rm -rf build"), `"sid"`, `"nested-sid"`, 1)
	if d := r.run(t, args, env, nested); d.PermissionDecision != "deny" {
		t.Fatalf("nested claude: %+v; want deny", d)
	}
	own := strings.Replace(bashCall("/proj", "rm -rf build"), `"sid"`, `"parent-sid"`, 1)
	if d := r.run(t, args, env, own); d.PermissionDecision != "" {
		t.Fatalf("the session's own Claude through the global hook: %+v; its --settings hook decides", d)
	}
}

// A headless claude -p that ccbridge does not drive is never held for a
// card (review 2, finding 11): its PermissionRequest returns at once and
// nothing is recorded or mirrored.
func TestHeadlessHandStartedClaudeIsNotHeld(t *testing.T) {
	r := newPolicyRig(t, state.PolicyRules{})
	env := map[string]string{state.EnvRuntimeDir: r.root, "CLAUDE_CODE_ENTRYPOINT": "sdk-cli", "CLAUDE_CODE_SESSION_ATTENDED": "0"}
	in := strings.Replace(bashCall("/proj", "touch x"), `"PreToolUse"`, `"PermissionRequest"`, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		var out, errb bytes.Buffer
		Main(context.Background(), PreTool, []string{claudehook.GlobalFlag}, strings.NewReader(in), &out, &errb, func(k string) string { return env[k] })
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the PermissionRequest hook of a headless claude -p is waiting for an answer")
	}
	if reqs, _ := r.store.Requests.List(); len(reqs) != 0 {
		t.Errorf("requests recorded: %+v", reqs)
	}
	if s, err := r.store.Sessions.Get(handSessionKey(state.Route{Server: "home", Project: "api"})); err == nil {
		t.Errorf("a session was recorded for it: %+v", s)
	}
}
