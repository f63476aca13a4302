package approval

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/state"
)

// TestAlwaysAcceptsOnlyWhatTheCardOffered: a crafted interaction (any
// value in the select's custom_id) must not save a rule in a scope, or a
// rule, the card never showed.
func TestAlwaysAcceptsOnlyWhatTheCardOffered(t *testing.T) {
	sug := []claudehook.PermissionUpdate{{Type: "setMode", Mode: "acceptEdits", Destination: "session"}}
	for i := range 7 {
		sug = append(sug, claudehook.PermissionUpdate{Type: "addRules", Behavior: "allow", Rules: []claudehook.Rule{{ToolName: "Bash", RuleContent: fmt.Sprintf("tool%d *", i)}}})
	}
	raw, _ := json.Marshal(sug)
	newReq := func() state.Request {
		req := permReq("Bash", claudehook.BashInput{Command: "make"})
		req.Suggestions = raw
		return req
	}
	// Without opening the menu, nothing is chosen from it.
	req := newReq()
	if _, err := Apply(reqID, &req, Action{Name: "alwayssel", Values: []string{"1.0"}}); err == nil || req.Status != state.RequestPending {
		t.Errorf("a choice from a menu the card did not show was accepted: %v, %s", err, req.Status)
	}
	req = newReq()
	if _, err := Apply(reqID, &req, Action{Name: "always"}); err != nil {
		t.Fatal(err)
	}
	offered := map[string]bool{}
	for _, o := range Render(reqID, req).Rows[0].Select.Options {
		offered[o.Value] = true
	}
	if len(offered) != chat.MaxOptions {
		t.Fatalf("%d options offered", len(offered))
	}
	var tried int
	for si := -1; si <= len(sug); si++ {
		for sc := -1; sc <= len(scopes); sc++ {
			for _, v := range []string{fmt.Sprintf("%d.%d", si, sc), fmt.Sprintf("%d.%d ", si, sc), fmt.Sprintf("%d.%dx", si, sc), fmt.Sprintf("0%d.%d", si, sc), fmt.Sprintf("+%d.%d", si, sc)} {
				if offered[v] {
					continue
				}
				tried++
				r := req
				if _, err := Apply(reqID, &r, Action{Name: "alwayssel", Values: []string{v}, User: "u"}); err == nil || r.Status != state.RequestPending {
					d, _ := Decode(r)
					t.Errorf("value %q was never offered but was accepted: %+v", v, d.UpdatedPermissions)
				}
			}
		}
	}
	// Two values at once are not one choice.
	r := req
	if _, err := Apply(reqID, &r, Action{Name: "alwayssel", Values: []string{"1.0", "1.1"}}); err == nil {
		t.Error("two values accepted")
	}
	// Every offered value still works, with the rule and scope it showed.
	for _, o := range Render(reqID, req).Rows[0].Select.Options {
		r := req
		if _, err := Apply(reqID, &r, Action{Name: "alwayssel", Values: []string{o.Value}, User: "u"}); err != nil {
			t.Fatalf("offered %q refused: %v", o.Value, err)
		}
		d := decision(t, r)
		if len(d.UpdatedPermissions) != 1 {
			t.Fatalf("decision %+v", d)
		}
		u := d.UpdatedPermissions[0]
		for _, s := range scopes {
			if u.Destination == s.dest && !containsAll(o.Label, suggestionLabel(u), s.label) {
				t.Errorf("option %q saved %s in %s", o.Label, suggestionLabel(u), u.Destination)
			}
		}
	}
	t.Logf("%d crafted values refused", tried)
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
