package state

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestPolicyRulesByScope(t *testing.T) {
	p := Policies{Scopes: map[string]PolicyRules{
		PolicyScope("home", "api", ""):      {Deny: []string{"Bash(rm -rf *)"}},
		PolicyScope("home", "api", "*"):     {Deny: []string{"Bash(rm -rf *)"}, Ask: []string{"Edit"}},
		PolicyScope("home", "api", "12345"): {Deny: []string{"WebFetch"}},
	}}
	if r := p.Rules("home", "api", ""); !slices.Equal(r.Deny, []string{"Bash(rm -rf *)"}) || len(r.Ask) != 0 {
		t.Errorf("channel: %+v", r)
	}
	if r := p.Rules("home", "api", "999"); !slices.Equal(r.Ask, []string{"Edit"}) {
		t.Errorf("a thread without its own scope: %+v", r)
	}
	if r := p.Rules("home", "api", "12345"); !slices.Equal(r.Deny, []string{"WebFetch"}) {
		t.Errorf("a configured thread: %+v", r)
	}
	if r := p.Rules("home", "web", ""); len(r.Ask)+len(r.Deny) != 0 {
		t.Errorf("another project: %+v", r)
	}
}

func TestPoliciesAny(t *testing.T) {
	empty := Policies{Scopes: map[string]PolicyRules{PolicyScope("home", "api", ""): {}, PolicyScope("home", "web", ""): {}}}
	if empty.Any() || (Policies{}).Any() {
		t.Error("Any with no rules")
	}
	empty.Scopes[PolicyScope("home", "web", "*")] = PolicyRules{Ask: []string{"Edit"}}
	if !empty.Any() {
		t.Error("not Any with an ask rule")
	}
}

// A hook that enforces the rules reads a corrupt record as an error and
// leaves it where it is: moving it aside would start the key afresh with
// no rules at all.
func TestReadPoliciesNeverQuarantines(t *testing.T) {
	s, err := OpenStore(filepath.Join(t.TempDir(), "rt"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ReadPolicies(s.Dir); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing: %v", err)
	}
	c, _ := OpenPolicies(s.Dir)
	if _, err := c.Update(context.Background(), PoliciesKey, func(p *Policies) error { p.AuditDir = "/a"; return nil }); err != nil {
		t.Fatal(err)
	}
	if p, err := ReadPolicies(s.Dir); err != nil || p.AuditDir != "/a" {
		t.Fatalf("read: %+v %v", p, err)
	}
	f := filepath.Join(s.Dir.Root(), "policies", "policies.json")
	os.WriteFile(f, []byte("x"), 0o600)
	if _, err := ReadPolicies(s.Dir); err == nil || errors.Is(err, ErrNotFound) {
		t.Fatalf("corrupt: %v", err)
	}
	if b, _ := os.ReadFile(f); string(b) != "x" {
		t.Fatalf("the corrupt record was moved: %q", b)
	}
}
