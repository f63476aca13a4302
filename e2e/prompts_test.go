//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/approval"
	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
	"github.com/ccbridge/ccbridge/internal/testutil/fakemodel"
	"github.com/ccbridge/ccbridge/internal/testutil/tmuxtest"
	"github.com/ccbridge/ccbridge/internal/tmux"
)

// 1. Bash `touch x` in default mode → card with the command → Allow → the
// file exists, the reply arrives, the card shows who allowed it. (8.) A
// click on that old card cannot answer the newer request. (9.) A stranger's
// click decides nothing.
func TestPromptAllow(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	b.model.Script("SCN_TOUCH", fakemodel.Tool("", "Bash", map[string]any{"command": "touch touched.txt && echo touched-ok", "description": "Create touched.txt"}))
	b.say(p, "SCN_TOUCH")
	card := b.waitCard(p, "the Bash card", func(m *fakediscord.Message) bool {
		return strings.Contains(m.Content, "touch touched.txt && echo touched-ok")
	})
	if !strings.Contains(card.Content, "Create touched.txt") {
		t.Errorf("card lacks the description: %q", card.Content)
	}
	stranger := b.srv.NewUser("stranger")
	it := b.srv.Click(card.ID, action(t, card, "allow"), stranger)
	if r := b.srv.WaitResponse(it, 5*time.Second); !strings.Contains(string(r.Response), "Only the owners") {
		t.Fatalf("stranger's click: %s", r.Response)
	}
	if len(b.cardNow(card).CustomIDs()) == 0 {
		t.Fatal("a stranger's click closed the card")
	}
	b.srv.Click(card.ID, action(t, card, "allow"), b.owner)
	done := b.waitCardText(card, "Allowed** by <@"+b.owner.ID+">")
	if len(done.CustomIDs()) != 0 {
		t.Errorf("buttons left on the answered card: %q", done.CustomIDs())
	}
	b.waitReply(p, "Done. Last tool result: touched-ok")
	if _, err := os.Stat(filepath.Join(p.dir, "touched.txt")); err != nil {
		t.Fatalf("the allowed command did not run: %v", err)
	}

	b.model.Script("SCN_SECOND", fakemodel.Tool("", "Bash", map[string]any{"command": "touch second.txt", "description": "Second file"}))
	b.say(p, "SCN_SECOND")
	second := b.waitCard(p, "the second card", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "touch second.txt") })
	old := b.srv.ClickStale(card.ID, action(t, card, "allow"), b.owner)
	if r := b.srv.WaitResponse(old, 5*time.Second); !strings.Contains(string(r.Response), "Already answered") || !strings.Contains(string(r.Response), `"flags":64`) {
		t.Fatalf("click on the old card: %s", r.Response)
	}
	if _, err := os.Stat(filepath.Join(p.dir, "second.txt")); err == nil {
		t.Fatal("the old card's click answered the new request")
	}
	if len(b.cardNow(second).CustomIDs()) == 0 {
		t.Fatal("the new card was closed by a click on the old one")
	}
}

// 2. Deny with instructions: the model's tool_result is exactly the text,
// and the turn continues.
func TestPromptDenyWithInstructions(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	b.model.Script("SCN_DENY", fakemodel.Tool("", "Bash", map[string]any{"command": "touch denied.txt", "description": "Touch it"}))
	b.say(p, "SCN_DENY")
	card := b.waitCard(p, "the card", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "touch denied.txt") })
	it := b.srv.Click(card.ID, action(t, card, "denymsg"), b.owner)
	if r := b.srv.WaitResponse(it, 5*time.Second); r.ResponseType != 9 {
		t.Fatalf("Deny with instructions answered %d, want a modal", r.ResponseType)
	}
	b.srv.SubmitModal(it, b.owner, map[string]string{"text": "use echo instead"})
	b.waitCardText(card, "Denied** by")
	r := b.model.WaitRequest(t, long, "the denial", func(r fakemodel.Request) bool { return len(r.ToolResults) == 1 })
	if got := r.ToolResults[0]; got.Content != "use echo instead" || !got.IsError {
		t.Fatalf("tool_result = %+v", got)
	}
	b.waitReply(p, "Done. Last tool result: use echo instead")
	if _, err := os.Stat(filepath.Join(p.dir, "denied.txt")); err == nil {
		t.Fatal("the denied command ran")
	}
}

// 3. Always for Bash(npm test *) scoped "this project, just me": the rule
// lands in .claude/settings.local.json and the next identical call raises
// no prompt.
func TestPromptAlwaysLocalRule(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	npm := map[string]any{"command": "npm test -- --watch=false", "description": "Run tests"}
	b.model.Script("SCN_NPM", fakemodel.Tool("", "Bash", npm), fakemodel.Tool("", "Bash", npm))
	b.say(p, "SCN_NPM")
	card := b.waitCard(p, "the npm card", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "npm test") })
	b.srv.Click(card.ID, action(t, card, "always"), b.owner)
	menu := b.srv.WaitMessage(5*time.Second, "the always menu", func(m *fakediscord.Message) bool {
		return m.ID == card.ID && strings.Contains(strings.Join(m.CustomIDs(), " "), "|alwayssel")
	})
	sel := menu.Component(action(t, menu, "alwayssel"))
	var value string
	for _, o := range sel["options"].([]any) {
		om := o.(map[string]any)
		if strings.Contains(om["label"].(string), "Bash(npm test *) — this project, just me") {
			value = om["value"].(string)
		}
	}
	if value == "" {
		t.Fatalf("no npm test rule for this project in %v", sel["options"])
	}
	b.srv.Select(card.ID, action(t, menu, "alwayssel"), b.owner, value)
	b.waitCardText(card, "this project, just me")
	b.waitReply(p, "Done. Last tool result:")
	raw, err := os.ReadFile(filepath.Join(p.dir, ".claude", "settings.local.json"))
	if err != nil || !strings.Contains(string(raw), `Bash(npm test *)`) {
		t.Fatalf("settings.local.json = %s, %v", raw, err)
	}
	cards := 0
	for _, m := range b.srv.Messages(p.channel) {
		if strings.Contains(m.Content, "wants to run a command") {
			cards++
		}
	}
	if cards != 1 {
		t.Fatalf("%d cards; the second identical call should raise none", cards)
	}
}

var askInput = map[string]any{"questions": []any{
	map[string]any{"question": "Which color do you prefer?", "header": "Color", "multiSelect": false, "options": []any{
		map[string]any{"label": "Red", "description": "The color red"}, map[string]any{"label": "Green", "description": "The color green"},
		map[string]any{"label": "Blue", "description": "The color blue"}}},
	map[string]any{"question": "Which features do you want?", "header": "Features", "multiSelect": true, "options": []any{
		map[string]any{"label": "Logging", "description": "Logs"}, map[string]any{"label": "Metrics", "description": "Numbers"},
		map[string]any{"label": "Tracing", "description": "Spans"}}},
}}

// 4. AskUserQuestion with two questions, one multiSelect, one answered
// with Other text: the model receives the answers text.
func TestPromptQuestions(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	b.model.Script("SCN_ASK", fakemodel.Tool("", "AskUserQuestion", askInput))
	b.say(p, "SCN_ASK")
	card := b.waitCard(p, "the question card", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "Which color do you prefer?") })
	other := b.srv.Click(card.ID, action(t, card, "qo"), b.owner)
	b.srv.WaitResponse(other, 5*time.Second)
	b.srv.SubmitModal(other, b.owner, map[string]string{"text": "Purple"})
	b.waitCardText(card, "→ Purple")
	b.srv.Select(card.ID, action(t, card, "qs"), b.owner, "0", "2")
	b.waitCardText(card, "Answered** by")
	r := b.model.WaitRequest(t, long, "the answers", func(r fakemodel.Request) bool { return len(r.ToolResults) == 1 })
	got := r.ToolResults[0].Content
	for _, want := range []string{`"Which color do you prefer?"="Purple"`, `"Which features do you want?"="Logging, Tracing"`} {
		if !strings.Contains(got, want) {
			t.Errorf("tool_result %q lacks %s", got, want)
		}
	}
}

// planFile matches the plan file Claude names in its plan-mode reminder.
var planFile = regexp.MustCompile(`/[^"\\\s]*/\.claude/plans/[A-Za-z0-9_-]+\.md`)

// planSteps write a plan to the file Claude names, then ask to exit plan
// mode (ExitPlanMode is deferred: it must be loaded with ToolSearch first).
var planSteps = []fakemodel.Step{
	{Dynamic: func(r fakemodel.Request) fakemodel.Step {
		body, _ := json.Marshal(r.Body)
		path := planFile.FindString(string(body))
		return fakemodel.Tool("", "Write", map[string]any{"file_path": path, "content": "# Plan\n\n1. Step one: create a.txt\n2. Step two: run tests\n"})
	}},
	fakemodel.Tool("", "ToolSearch", map[string]any{"query": "select:ExitPlanMode"}),
	fakemodel.Tool("", "ExitPlanMode", map[string]any{}),
}

// 5. Plan → Approve — accept edits: "User has approved your plan", and the
// next hook payload's permission_mode is acceptEdits. Keep planning with
// feedback: the model gets the feedback and stays in plan mode.
func TestPromptPlan(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 2, "")
	approve, keep := b.projects[0], b.projects[1]
	setMode(t, b, "plan")
	b.model.Script("SCN_PLAN_OK", planSteps...)
	b.model.Script("SCN_PLAN_KEEP", planSteps...)
	b.say(approve, "SCN_PLAN_OK")
	b.say(keep, "SCN_PLAN_KEEP")

	card := b.waitCard(approve, "the plan card", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "Claude's plan") })
	if !strings.Contains(card.Content, "1. Step one: create a.txt") {
		t.Errorf("the card does not show the plan: %q", card.Content)
	}
	b.srv.Click(card.ID, action(t, card, "planaccept"), b.owner)
	b.waitCardText(card, "Plan approved")
	b.model.WaitRequest(t, long, "the approval", func(r fakemodel.Request) bool {
		return strings.Contains(r.LastUserText, "SCN_PLAN_OK") && len(r.ToolResults) == 1 && strings.Contains(r.ToolResults[0].Content, "User has approved your plan")
	})
	b.waitReply(approve, "User has approved your plan")
	waitMode(t, b, approve, "acceptEdits")

	kcard := b.waitCard(keep, "the second plan card", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "Claude's plan") })
	it := b.srv.Click(kcard.ID, action(t, kcard, "plankeep"), b.owner)
	b.srv.WaitResponse(it, 5*time.Second)
	b.srv.SubmitModal(it, b.owner, map[string]string{"text": "add a docs step"})
	b.waitCardText(kcard, "Keep planning")
	b.model.WaitRequest(t, long, "the feedback", func(r fakemodel.Request) bool {
		return strings.Contains(r.LastUserText, "SCN_PLAN_KEEP") && len(r.ToolResults) == 1 && r.ToolResults[0].Content == "add a docs step"
	})
	b.waitReply(keep, "add a docs step")
	waitMode(t, b, keep, "plan")
}

// setMode rewrites the bridge's config so every project starts in mode,
// then restarts the daemon.
func setMode(t *testing.T, b *bridge, mode string) {
	t.Helper()
	cfg, _ := os.ReadFile(b.cfg)
	os.WriteFile(b.cfg, []byte(strings.Replace(string(cfg), `permission_mode = "default"`, `permission_mode = "`+mode+`"`, 1)), 0o600)
	b.cmd.Process.Signal(syscall.SIGTERM)
	b.cmd.Wait()
	b.start()
}

// waitMode waits until the session's last hook payload carried mode.
func waitMode(t *testing.T, b *bridge, p *project, mode string) {
	t.Helper()
	deadline := time.Now().Add(long)
	for {
		s, _ := b.store.Sessions.Get(p.key)
		if s.ModeSeen == mode {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: permission_mode %q, want %q", p.key, s.ModeSeen, mode)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// 6. The terminal answers first: the card reads "answered in the
// terminal"; a click afterwards is refused.
func TestPromptAnsweredInTerminal(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	b.model.Script("SCN_TERM", fakemodel.Tool("", "Bash", map[string]any{"command": "touch term.txt && echo term-ok", "description": "Touch"}))
	b.say(p, "SCN_TERM")
	card := b.waitCard(p, "the card", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "touch term.txt") })
	b.pressOnDialog(p, card, "1", "Answered in the terminal")
	if len(b.cardNow(card).CustomIDs()) != 0 {
		t.Error("buttons left on a card answered in the terminal")
	}
	late := b.srv.ClickStale(card.ID, action(t, card, "deny"), b.owner)
	if r := b.srv.WaitResponse(late, 5*time.Second); !strings.Contains(string(r.Response), "Already answered in the terminal") {
		t.Fatalf("late click: %s", r.Response)
	}
	b.waitReply(p, "Done. Last tool result: term-ok")
}

// 7. With a timeout of a few seconds: no decision, the terminal dialog
// still open, the card says it expired.
func TestPromptTimeout(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "prompt_timeout = \"3s\"")
	p := b.projects[0]
	b.model.Script("SCN_WAIT", fakemodel.Tool("", "Bash", map[string]any{"command": "touch never.txt", "description": "Never"}))
	b.say(p, "SCN_WAIT")
	card := b.waitCard(p, "the card", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "touch never.txt") })
	b.waitCardText(card, "Expired")
	s, _ := b.store.Sessions.Get(p.key)
	screen, err := b.tmux.Capture(context.Background(), s.PaneID, 0)
	if err != nil || !strings.Contains(screen, "Do you want to proceed?") {
		t.Fatalf("the terminal dialog is gone: %v\n%s", err, screen)
	}
	if _, err := os.Stat(filepath.Join(p.dir, "never.txt")); err == nil {
		t.Fatal("the command ran without an answer")
	}
	for _, r := range b.model.Requests() {
		if len(r.ToolResults) > 0 {
			t.Fatalf("the model got a tool result: %+v", r.ToolResults)
		}
	}
}

// 10. Two sessions prompting at the same time are each answered correctly.
func TestPromptTwoSessionsAtOnce(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 2, "")
	a, c := b.projects[0], b.projects[1]
	b.model.Script("SCN_PAR_A", fakemodel.Tool("", "Bash", map[string]any{"command": "touch a.txt && echo a-ok", "description": "A"}))
	b.model.Script("SCN_PAR_B", fakemodel.Tool("", "Bash", map[string]any{"command": "touch b.txt && echo b-ok", "description": "B"}))
	b.say(a, "SCN_PAR_A")
	b.say(c, "SCN_PAR_B")
	cardA := b.waitCard(a, "card A", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "touch a.txt") })
	cardB := b.waitCard(c, "card B", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "touch b.txt") })
	b.srv.Click(cardB.ID, action(t, cardB, "deny"), b.owner)
	b.srv.Click(cardA.ID, action(t, cardA, "allow"), b.owner)
	b.waitReply(a, "Done. Last tool result: a-ok")
	b.waitReply(c, "Done. Last tool result: "+approval.DenyMessage)
	if _, err := os.Stat(filepath.Join(a.dir, "a.txt")); err != nil {
		t.Error("A's allowed command did not run")
	}
	if _, err := os.Stat(filepath.Join(c.dir, "b.txt")); err == nil {
		t.Error("B's denied command ran")
	}
}

// 11. A turn with text before two tool calls posts two progress messages
// in order, with no duplicates.
func TestProgressMessages(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	b.model.Script("SCN_PROGRESS",
		fakemodel.Tool("First I will look around.", "Bash", map[string]any{"command": "echo one", "description": "one"}),
		fakemodel.Tool("Now I will check the result.", "Bash", map[string]any{"command": "echo two", "description": "two"}),
		fakemodel.Text("All done here."))
	b.say(p, "SCN_PROGRESS")
	b.waitReply(p, "All done here.")
	time.Sleep(time.Second)
	// Progress messages carry no footer; the reply ends with one.
	got := b.contents(p.channel)
	if len(got) != 3 || got[0] != "First I will look around." || got[1] != "Now I will check the result." || body(got[2]) != "All done here." || got[2] == body(got[2]) {
		t.Fatalf("messages = %q", got)
	}
}

// Escape in the terminal dismisses the dialog (and interrupts the turn): the
// card says it was interrupted, and a click afterwards changes nothing.
func TestPromptInterruptedInTerminal(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	b.model.Script("SCN_ESC", fakemodel.Tool("", "Bash", map[string]any{"command": "touch esc.txt", "description": "Esc"}))
	b.say(p, "SCN_ESC")
	card := b.waitCard(p, "the card", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "touch esc.txt") })
	b.pressOnDialog(p, card, "Escape", "Interrupted")
	late := b.srv.ClickStale(card.ID, action(t, card, "allow"), b.owner)
	if r := b.srv.WaitResponse(late, 5*time.Second); !strings.Contains(string(r.Response), "dismissed in the terminal") {
		t.Fatalf("late click: %s", r.Response)
	}
	if _, err := os.Stat(filepath.Join(p.dir, "esc.txt")); err == nil {
		t.Fatal("the dismissed command ran")
	}
}

// pressOnDialog presses key in the session's pane while its permission
// dialog shows, until the card says want. The card is posted as the dialog
// opens, and the dialog draws before it takes keys: a person would press
// again, and so does this.
func (b *bridge) pressOnDialog(p *project, card *fakediscord.Message, key tmux.Key, want string) {
	b.t.Helper()
	s, _ := b.store.Sessions.Get(p.key)
	tmuxtest.WaitScreen(b.t, b.tmux, s.PaneID, "Do you want to proceed?", long)
	deadline := time.Now().Add(long)
	for !strings.Contains(b.cardNow(card).Content, want) {
		if time.Now().After(deadline) {
			b.t.Fatalf("the card never said %q", want)
		}
		if screen, _ := b.tmux.Capture(context.Background(), s.PaneID, 0); strings.Contains(screen, "Do you want to proceed?") {
			if err := b.tmux.SendKeys(context.Background(), s.PaneID, key); err != nil {
				b.t.Fatal(err)
			}
		}
		time.Sleep(time.Second)
	}
}
