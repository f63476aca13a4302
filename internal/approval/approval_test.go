package approval

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/state"
)

const reqID = "0123456789abcdef01234567"

// fixture builds a pending request from a claudehook testdata payload.
func fixture(t *testing.T, name string) state.Request {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "claudehook", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in, err := claudehook.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	sug, _ := json.Marshal(in.PermissionSuggestions)
	return state.Request{Instance: "inst01", ToolName: in.ToolName, ToolInput: in.ToolInput, Suggestions: sug, Status: state.RequestPending}
}

// checkLimits asserts what Discord would reject.
func checkLimits(t *testing.T, m chat.Message) {
	t.Helper()
	if n := len([]rune(m.Content)); n > chat.Limit {
		t.Errorf("content has %d characters", n)
	}
	if len(m.Rows) > 5 {
		t.Errorf("%d rows", len(m.Rows))
	}
	for _, r := range m.Rows {
		if len(r.Buttons) > 5 || (r.Select != nil && len(r.Buttons) > 0) {
			t.Errorf("bad row %+v", r)
		}
		ids := []string{}
		for _, b := range r.Buttons {
			ids = append(ids, b.CustomID)
		}
		if r.Select != nil {
			ids = append(ids, r.Select.CustomID)
			if len(r.Select.Options) > 25 {
				t.Errorf("select with %d options", len(r.Select.Options))
			}
		}
		for _, id := range ids {
			if len(id) > chat.MaxIDLen {
				t.Errorf("custom_id %q too long", id)
			}
			if d, err := chat.DecodeID(id); err != nil || d.Instance != "inst01" || d.Args[0] != reqID {
				t.Errorf("custom_id %q does not bind the request: %+v %v", id, d, err)
			}
		}
	}
}

func click(t *testing.T, req *state.Request, a Action) Result {
	t.Helper()
	if a.User == "" {
		a.User = "owner"
	}
	r, err := Apply(reqID, req, a)
	if err != nil {
		t.Fatalf("Apply(%+v): %v", a, err)
	}
	checkLimits(t, Render(reqID, *req))
	return r
}

func decision(t *testing.T, req state.Request) claudehook.Decision {
	t.Helper()
	if req.Status != state.RequestDecided {
		t.Fatalf("status = %s, want decided", req.Status)
	}
	d, err := Decode(req)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestPermissionCardAllowDeny(t *testing.T) {
	req := fixture(t, "permissionrequest_bash.json")
	card := Render(reqID, req)
	checkLimits(t, card)
	if !strings.Contains(card.Content, "touch touched.txt && echo touched-ok") || !strings.Contains(card.Content, "Create touched.txt") || len(card.Rows[0].Buttons) != 4 {
		t.Fatalf("card = %+v", card)
	}
	click(t, &req, Action{Name: "allow"})
	if d := decision(t, req); d.Behavior != "allow" || d.UpdatedPermissions != nil {
		t.Fatalf("decision = %+v", d)
	}
	after := Render(reqID, req)
	if len(after.Rows) != 0 || !strings.Contains(after.Content, "Allowed** by owner") {
		t.Fatalf("decided card = %+v", after)
	}

	req = fixture(t, "permissionrequest_bash.json")
	click(t, &req, Action{Name: "deny"})
	if d := decision(t, req); d.Behavior != "deny" || d.Message != DenyMessage || d.Interrupt {
		t.Fatalf("deny = %+v", d)
	}
}

func TestDenyWithInstructionsIsVerbatim(t *testing.T) {
	req := fixture(t, "permissionrequest_bash.json")
	r := click(t, &req, Action{Name: "denymsg"})
	if r.Modal == nil || len(r.Modal.Inputs) != 1 || req.Status != state.RequestPending {
		t.Fatalf("no modal: %+v", r)
	}
	d, _ := chat.DecodeID(r.Modal.CustomID)
	click(t, &req, Action{Name: d.Args[1], Fields: map[string]string{"text": "use echo instead\nplease"}})
	if got := decision(t, req); got.Behavior != "deny" || got.Message != "use echo instead\nplease" || got.Interrupt {
		t.Fatalf("decision = %+v", got)
	}
}

func TestAlwaysOffersEachSuggestionInEachScope(t *testing.T) {
	req := fixture(t, "permissionrequest_npm.json")
	click(t, &req, Action{Name: "always"})
	card := Render(reqID, req)
	sel := card.Rows[0].Select
	if sel == nil || len(sel.Options) != 4 || !strings.Contains(sel.Options[1].Label, "always allow Bash(npm test *) — this project, just me") {
		t.Fatalf("always menu = %+v", card.Rows)
	}
	click(t, &req, Action{Name: "alwayssel", Values: []string{sel.Options[1].Value}})
	d := decision(t, req)
	want := `[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"npm test *"}],"behavior":"allow","destination":"localSettings"}]`
	if got, _ := json.Marshal(d.UpdatedPermissions); d.Behavior != "allow" || string(got) != want {
		t.Fatalf("updatedPermissions = %s", got)
	}
	// A mode switch is offered for the session only.
	req = fixture(t, "permissionrequest_bash.json")
	click(t, &req, Action{Name: "always"})
	if opts := Render(reqID, req).Rows[0].Select.Options; len(opts) != 5 || !strings.Contains(opts[4].Label, "allow edits for this session — this session") {
		t.Fatalf("options = %+v", opts)
	}
	if _, err := Apply(reqID, &req, Action{Name: "alwayssel", Values: []string{"9.9"}}); err == nil {
		t.Error("out-of-range choice accepted")
	}
}

func TestQuestionsAnswerShape(t *testing.T) {
	req := fixture(t, "pretooluse_ask.json")
	card := Render(reqID, req)
	checkLimits(t, card)
	if len(card.Rows) != 3 || len(card.Rows[0].Buttons) != 4 || card.Rows[1].Select == nil || card.Rows[1].Select.MaxValues != 4 {
		t.Fatalf("rows = %+v", card.Rows)
	}
	click(t, &req, Action{Name: "qb", Args: []string{"0", "2"}})
	if req.Status != state.RequestPending || req.Answers["Which color do you prefer?"] != "Blue" {
		t.Fatalf("after first answer: %+v", req)
	}
	r := click(t, &req, Action{Name: "qs", Args: []string{"1"}, Values: []string{"0", "2", otherValue}})
	if r.Modal == nil {
		t.Fatal("Other… opened no modal")
	}
	click(t, &req, Action{Name: "qtext", Args: []string{"1"}, Fields: map[string]string{"text": "Custom feat"}})
	d := decision(t, req)
	var in claudehook.AskInput
	if err := json.Unmarshal(d.UpdatedInput, &in); err != nil {
		t.Fatal(err)
	}
	if len(in.Questions) != 2 || in.Answers["Which color do you prefer?"] != "Blue" || in.Answers["Which features do you want?"] != "Logging, Tracing, Custom feat" {
		t.Fatalf("updatedInput = %s", d.UpdatedInput)
	}
}

func TestQuestionSubmitPartialAndReplyInChat(t *testing.T) {
	req := fixture(t, "pretooluse_ask.json")
	if r := click(t, &req, Action{Name: "submit"}); r.Notice == "" {
		t.Fatal("submitted with no answers")
	}
	click(t, &req, Action{Name: "qs", Args: []string{"1"}, Values: []string{"1"}})
	click(t, &req, Action{Name: "submit"})
	if d := decision(t, req); !strings.Contains(string(d.UpdatedInput), `"answers":{"Which features do you want?":"Metrics"}`) {
		t.Fatalf("updatedInput = %s", d.UpdatedInput)
	}
	req = fixture(t, "pretooluse_ask.json")
	click(t, &req, Action{Name: "chattext", Fields: map[string]string{"text": "use yellow"}})
	if d := decision(t, req); d.Behavior != "deny" || d.Message != "use yellow" {
		t.Fatalf("reply in chat = %+v", d)
	}
}

func TestPlanApproveKeepEdit(t *testing.T) {
	req := fixture(t, "pretooluse_exitplan.json")
	card := Render(reqID, req)
	checkLimits(t, card)
	if !strings.Contains(card.Content, "1. Step one: create a.txt") || len(card.Rows[0].Buttons) != 4 {
		t.Fatalf("plan card = %+v", card)
	}
	click(t, &req, Action{Name: "planaccept"})
	d := decision(t, req)
	if d.Behavior != "allow" || string(d.UpdatedInput) != string(req.ToolInput) || d.UpdatedPermissions[0].Mode != "acceptEdits" || d.UpdatedPermissions[0].Destination != "session" {
		t.Fatalf("approve = %+v", d)
	}
	req = fixture(t, "pretooluse_exitplan.json")
	click(t, &req, Action{Name: "plantext", Fields: map[string]string{"text": "add a docs step"}})
	if d := decision(t, req); d.Behavior != "deny" || d.Message != "add a docs step" {
		t.Fatalf("keep planning = %+v", d)
	}
	req = fixture(t, "pretooluse_exitplan.json")
	r := click(t, &req, Action{Name: "planedit"})
	if r.Modal == nil || !strings.HasPrefix(r.Modal.Inputs[0].Value, "# Plan") {
		t.Fatalf("edit modal = %+v", r.Modal)
	}
	click(t, &req, Action{Name: "planedited", Fields: map[string]string{"plan": "# Edited plan"}})
	if d := decision(t, req); !strings.Contains(string(d.UpdatedInput), `"plan":"# Edited plan"`) || !strings.Contains(string(d.UpdatedInput), "planFilePath") {
		t.Fatalf("edited = %s", d.UpdatedInput)
	}
}

func TestLongPlanIsAttached(t *testing.T) {
	req := fixture(t, "pretooluse_exitplan.json")
	long, _ := json.Marshal(claudehook.PlanInput{Plan: strings.Repeat("step\n", 1000), PlanFilePath: "/p.md"})
	req.ToolInput = long
	card := Render(reqID, req)
	checkLimits(t, card)
	if len(card.Files) != 1 || card.Files[0].Name != "plan.md" || len(card.Rows[0].Buttons) != 3 {
		t.Fatalf("long plan card: files %d, buttons %d", len(card.Files), len(card.Rows[0].Buttons))
	}
}

func TestClosedCardsHaveNoButtonsAndSaySo(t *testing.T) {
	for status, want := range map[string]string{state.RequestTerminal: "Answered in the terminal", state.RequestExpired: "Expired", state.RequestInterrupted: "Interrupted"} {
		req := fixture(t, "permissionrequest_bash.json")
		req.Status = status
		card := Render(reqID, req)
		if len(card.Rows) != 0 || !strings.Contains(card.Content, want) {
			t.Errorf("%s card = %+v", status, card)
		}
	}
}

func TestOtherToolsAndAgents(t *testing.T) {
	for _, f := range []string{"pretooluse_write.json", "pretooluse_edit.json"} {
		req := fixture(t, f)
		req.AgentType = "general-purpose"
		card := Render(reqID, req)
		checkLimits(t, card)
		if !strings.Contains(card.Content, "general-purpose agent") {
			t.Errorf("%s: %s", f, card.Content)
		}
	}
	edit := Render(reqID, fixture(t, "pretooluse_edit.json"))
	if !strings.Contains(edit.Content, "-alpha\n+beta") {
		t.Errorf("edit preview: %s", edit.Content)
	}
	huge := fixture(t, "pretooluse_write.json")
	huge.ToolInput, _ = json.Marshal(claudehook.WriteInput{FilePath: "/x", Content: strings.Repeat("x", 50000)})
	checkLimits(t, Render(reqID, huge))
}
