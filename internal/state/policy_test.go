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
