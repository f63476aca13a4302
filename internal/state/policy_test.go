package state

import (
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
