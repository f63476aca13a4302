package approval

import (
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/state"
)

// A card Codex's dialog answers by keys offers Always (the dialog's "don't
// ask again") and says what it is; a click on it allows with Always set,
// and the outcome names the prefix once the daemon read it. Claude's card
// with no suggestions still offers none.
func TestKeyedCardOffersCodexAlways(t *testing.T) {
	req := permReq("Bash", claudehook.BashInput{Command: "touch /tmp/a"})
	if strings.Contains(strings.Join(customIDs(Render(reqID, req)), " "), "|always") {
		t.Fatal("Claude's card offers Always with no suggestion")
	}
	req.Keys = "codex"
	m := Render(reqID, req)
	if !strings.Contains(strings.Join(customIDs(m), " "), "|always") || !strings.Contains(m.Content, "don't ask again for commands that start with") {
		t.Fatalf("keyed card %q %q", m.Content, customIDs(m))
	}
	if _, err := Apply(reqID, &req, Action{Name: "always", User: "ann"}); err != nil {
		t.Fatal(err)
	}
	d, _ := Decode(req)
	if req.Status != state.RequestDecided || !req.Always || d.Behavior != "allow" || len(d.UpdatedPermissions) != 0 {
		t.Fatalf("request %+v, decision %+v", req, d)
	}
	if got := KeysAlwaysScope(req.Outcome, "touch"); got != "✅ **Allowed**, and Codex will not ask again for commands that start with `touch`, by ann" {
		t.Errorf("outcome %q", got)
	}
	it := permReq("Bash", claudehook.BashInput{Command: "touch /tmp/a"})
	it.Keys = "codex"
	res, _ := Apply(reqID, &it, Action{Name: "denymsg"})
	if res.Modal == nil || !strings.Contains(res.Modal.Title, "Codex") {
		t.Errorf("modal %+v", res.Modal)
	}
}

func customIDs(m chat.Message) []string {
	var ids []string
	for _, r := range m.Rows {
		for _, b := range r.Buttons {
			ids = append(ids, b.CustomID)
		}
	}
	return ids
}

// Codex's question card names Codex; Other is offered as for Claude (the
// daemon types it as the note of Codex's "None of the above").
func TestKeyedQuestionCard(t *testing.T) {
	req := state.Request{ToolName: "AskUserQuestion", Instance: "inst", Status: state.RequestPending, Keys: "codex",
		ToolInput: []byte(`{"questions":[{"id":"color","header":"Color","question":"Which color?","options":[{"label":"Red"},{"label":"Blue"}]}]}`)}
	m := Render(reqID, req)
	ids := strings.Join(customIDs(m), " ")
	if !strings.Contains(m.Content, "Codex asks") || !strings.Contains(ids, "|qo|") || !strings.Contains(ids, "|qb|") {
		t.Fatalf("card %q %s", m.Content, ids)
	}
	res, err := Apply(reqID, &req, Action{Name: "qo", Args: []string{"0"}})
	if err != nil || res.Modal == nil {
		t.Fatalf("Other: %+v, %v", res, err)
	}
	if _, err := Apply(reqID, &req, Action{Name: "qtext", Args: []string{"0"}, Fields: map[string]string{"text": "green"}, User: "ann"}); err != nil || req.Status != state.RequestDecided || req.Answers["Which color?"] != "green" {
		t.Errorf("answer: %v, %+v", err, req)
	}
}

// Codex's plan card offers what its "Implement this plan?" dialog does:
// implement it, or keep planning; nothing of Claude's modes or edits.
func TestKeyedPlanCard(t *testing.T) {
	req := state.Request{ToolName: "ExitPlanMode", Instance: "inst", Status: state.RequestPending, Keys: "codex", ToolInput: []byte(`{"plan":"1. Do A"}`)}
	m := Render(reqID, req)
	ids := strings.Join(customIDs(m), " ")
	if !strings.Contains(m.Content, "Codex's plan") || !strings.Contains(ids, "|plandefault") || !strings.Contains(ids, "|plankeep") ||
		strings.Contains(ids, "|planaccept") || strings.Contains(ids, "|planedit") {
		t.Fatalf("card %q %s", m.Content, ids)
	}
	for _, a := range []string{"planaccept", "planedit", "planedited"} {
		r := req
		if _, err := Apply(reqID, &r, Action{Name: a, Fields: map[string]string{"plan": "x"}}); err == nil {
			t.Errorf("%s was taken for Codex", a)
		}
	}
	if _, err := Apply(reqID, &req, Action{Name: "plandefault", User: "ann"}); err != nil || req.Status != state.RequestDecided || !strings.Contains(req.Outcome, "Codex switches to Default") {
		t.Errorf("approve: %v, %+v", err, req)
	}
}

// Codex keeps Always's rule in ~/.codex/rules/default.rules: the card says
// it holds machine-wide, for every project, not only this one.
func TestKeyedCardSaysAlwaysIsMachineWide(t *testing.T) {
	req := permReq("Bash", claudehook.BashInput{Command: "touch /tmp/a"})
	req.Keys = "codex"
	if m := Render(reqID, req); !strings.Contains(m.Content, "every project on this machine") {
		t.Errorf("card %q", m.Content)
	}
}
