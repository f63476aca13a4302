//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
	"github.com/ccbridge/ccbridge/internal/testutil/fakeresponses"
	"github.com/ccbridge/ccbridge/internal/tmux"
)

// approvalQuestion is the line of Codex's approval dialog (agents.md §1.4).
const approvalQuestion = "Would you like to run the following command?"

// escalate is a step asking to run cmd outside the sandbox, with the
// prefix the model proposes for "don't ask again" (Codex 0.171.0 showed
// the model's prefix_rule for a single command).
func escalate(cmd, why string, prefix ...string) fakeresponses.Step {
	args := map[string]any{"cmd": cmd, "sandbox_permissions": "require_escalated", "justification": why}
	if len(prefix) > 0 {
		args["prefix_rule"] = prefix
	}
	return fakeresponses.Call("", "exec_command", args)
}

// waitScreen waits until the Codex pane's screen satisfies ok.
func (b *bridge) waitScreen(what string, ok func(string) bool) string {
	b.t.Helper()
	var screen string
	for deadline := time.Now().Add(long); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if panes := b.panes(); len(panes) > 0 {
			screen, _ = b.tmux.Capture(b.t.Context(), panes[0].ID, 0)
			if ok(screen) {
				return screen
			}
		}
	}
	b.t.Fatalf("the pane never showed %s:\n%s", what, screen)
	return ""
}

// Codex's permission card is answered with the keys of Codex's own
// dialog, which stays up in the terminal while the card waits (Codex runs
// its PermissionRequest hook before the dialog and hides it while the
// hook waits, agents.md §1.3.4; the hook now returns at once): Allow
// presses "Yes, proceed"; Always presses "Yes, and don't ask again", the
// card names the prefix Codex gave it, and the same command then runs with
// no card; Deny with instructions presses Codex's No (Esc) and types the
// instructions as the next message.
func TestCodexCardsByKeys(t *testing.T) {
	t.Parallel()
	b, fake := newCodexBridge(t)
	p := b.projects[1]
	dir := settledTempDir(t)
	allowed, always, denied := filepath.Join(dir, "allowed.txt"), filepath.Join(dir, "always.txt"), filepath.Join(dir, "denied.txt")
	fake.Script("SCN_CXK_ALLOW", escalate("touch "+allowed+" && echo touched-ok", "Create a file outside the workspace?"))
	fake.Script("SCN_CXK_ALWAYS", escalate("touch "+always, "Create it always?", "touch", always))
	fake.Script("SCN_CXK_DENY", escalate("touch "+denied, "Create another file outside?"))

	// Allow: the dialog is in the terminal beside the card.
	b.say(p, "run SCN_CXK_ALLOW")
	card := b.waitCard(p, "the escalation card", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "allowed.txt") })
	b.waitScreen("the approval dialog while the card waits", func(s string) bool { return strings.Contains(s, approvalQuestion) })
	if _, err := os.Stat(allowed); err == nil {
		t.Fatal("the command ran before it was allowed")
	}
	b.srv.Click(card.ID, action(t, card, "allow"), b.owner)
	b.waitCardText(card, "Allowed** by")
	b.waitReply(p, "Output:\ntouched-ok")
	if _, err := os.Stat(allowed); err != nil {
		t.Errorf("the allowed command did not run: %v", err)
	}

	// Always: Codex's "don't ask again", its prefix said on the card.
	b.say(p, "run SCN_CXK_ALWAYS")
	card = b.waitCard(p, "the Always card", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "always.txt") })
	if !strings.Contains(card.Content, "don't ask again") {
		t.Errorf("the card does not say what Always is: %q", card.Content)
	}
	b.waitScreen("the approval dialog", func(s string) bool { return strings.Contains(s, approvalQuestion) })
	b.srv.Click(card.ID, action(t, card, "always"), b.owner)
	b.waitCardText(card, "commands that start with `touch "+always+"`")
	waitFile(t, always)
	dones := func() int { return strings.Count(strings.Join(b.contents(p.channel), "\n"), "Done. Last tool output:") }
	for deadline := time.Now().Add(long); dones() < 2; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no reply after Always")
		}
	}
	if err := os.Remove(always); err != nil {
		t.Fatal(err)
	}
	cards := len(b.srv.Messages(p.channel))
	b.say(p, "again SCN_CXK_ALWAYS")
	waitFile(t, always)
	for deadline := time.Now().Add(long); dones() < 3; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no reply to the command Codex no longer asks about")
		}
	}
	for _, m := range b.srv.Messages(p.channel)[cards:] {
		if strings.Contains(strings.Join(m.CustomIDs(), " "), "|p|") {
			t.Errorf("a card for a command Codex was told not to ask about: %q", m.Content)
		}
	}

	// Deny with instructions: Codex's No, then the instructions as the
	// next message.
	b.say(p, "run SCN_CXK_DENY")
	card = b.waitCard(p, "the deny card", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "denied.txt") })
	b.waitScreen("the approval dialog", func(s string) bool { return strings.Contains(s, approvalQuestion) })
	it := b.srv.Click(card.ID, action(t, card, "denymsg"), b.owner)
	if r := b.srv.WaitResponse(it, 5*time.Second); r.ResponseType != 9 {
		t.Fatalf("Deny with instructions answered %d, want a modal", r.ResponseType)
	}
	b.srv.SubmitModal(it, b.owner, map[string]string{"text": "use echo instead"})
	b.waitCardText(card, "Denied** by")
	fake.WaitRequest(t, long, "the instructions as the next message", func(r fakeresponses.Request) bool { return r.LastUserText == "use echo instead" })
	b.waitReply(p, "ok: use echo instead")
	if _, err := os.Stat(denied); err == nil {
		t.Error("the denied command ran")
	}
}

// Codex's permission dialog answered in the terminal first: the card is
// retired ("answered in the terminal"), and a click on it afterwards
// presses nothing.
func TestCodexCardAnsweredInTerminal(t *testing.T) {
	t.Parallel()
	b, fake := newCodexBridge(t)
	p := b.projects[1]
	dir := settledTempDir(t)
	first, second := filepath.Join(dir, "first.txt"), filepath.Join(dir, "second.txt")
	fake.Script("SCN_CXK_TERM", escalate("touch "+first, "Create a file outside?"))
	fake.Script("SCN_CXK_NEXT", escalate("touch "+second, "And another?"))

	b.say(p, "run SCN_CXK_TERM")
	card := b.waitCard(p, "the card", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "first.txt") })
	allow := action(t, card, "allow")
	b.waitScreen("the approval dialog", func(s string) bool { return strings.Contains(s, approvalQuestion) })
	if err := b.tmux.SendKeys(t.Context(), b.panes()[0].ID, tmux.Key("1")); err != nil {
		t.Fatal(err)
	}
	waitFile(t, first)
	b.waitCardText(card, "Answered in the terminal")

	// The next dialog is up when the stale card is clicked: nothing is
	// pressed into it.
	b.say(p, "run SCN_CXK_NEXT")
	next := b.waitCard(p, "the next card", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "second.txt") })
	b.waitScreen("the next dialog", func(s string) bool { return strings.Contains(s, approvalQuestion) && strings.Contains(s, "second.txt") })
	it := b.srv.ClickStale(card.ID, allow, b.owner)
	if r := b.srv.WaitResponse(it, 5*time.Second); !strings.Contains(string(r.Response), "Already answered in the terminal") {
		t.Errorf("a click on the retired card answered %s", r.Response)
	}
	time.Sleep(2 * time.Second)
	if _, err := os.Stat(second); err == nil {
		t.Error("a click on the retired card allowed the next command")
	}

	// Deny on the live card is Codex's No: the turn ends (its Interrupt
	// hook fires) and the command never runs.
	b.srv.Click(next.ID, action(t, next, "deny"), b.owner)
	b.waitCardText(next, "Denied** by")
	deadline := time.Now().Add(long)
	for rec, _ := b.store.Sessions.Get(p.key); rec.LastEvent != "Interrupt"; rec, _ = b.store.Sessions.Get(p.key) {
		if time.Now().After(deadline) {
			t.Fatalf("Deny did not end Codex's turn; record %+v", rec)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := os.Stat(second); err == nil {
		t.Error("the denied command ran")
	}
	// Each answer is in the audit log: the terminal's, then the card's.
	raw, _ := os.ReadFile(filepath.Join(b.stateDir, "ccbridge", "audit.jsonl"))
	var terminal, clicked bool
	for _, l := range strings.Split(string(raw), "\n") {
		terminal = terminal || strings.Contains(l, "first.txt") && strings.Contains(l, `"from":"terminal"`)
		clicked = clicked || strings.Contains(l, "second.txt") && strings.Contains(l, `"answer":"deny"`) && strings.Contains(l, `"who":"`+b.owner.ID+`"`)
	}
	if !terminal || !clicked {
		t.Errorf("audit log (terminal %v, card %v):\n%s", terminal, clicked, raw)
	}
}

// Codex's questions (request_user_input, which Codex offers in Plan mode
// only) come as a question card, answered from Discord in Codex's own
// question dialog: a listed option by its digit, and Other as Codex's
// "None of the above" with the text as its note.
func TestCodexQuestionCard(t *testing.T) {
	t.Parallel()
	b, fake := newCodexBridge(t)
	p := b.projects[1]
	fake.Script("SCN_CXK_ASK", fakeresponses.Call("", "request_user_input", map[string]any{"questions": []any{
		map[string]any{"id": "color", "header": "Color", "question": "Which color do you prefer?",
			"options": []any{map[string]any{"label": "Red", "description": "The color red"}, map[string]any{"label": "Blue", "description": "The color blue"}}},
		map[string]any{"id": "size", "header": "Size", "question": "Which size?",
			"options": []any{map[string]any{"label": "Small", "description": "small"}, map[string]any{"label": "Large", "description": "large"}}},
	}}))

	b.planMode(p)

	b.say(p, "ask SCN_CXK_ASK")
	card := b.waitCard(p, "the question card", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "Which color do you prefer?") })
	if !strings.Contains(card.Content, "Codex asks") || !strings.Contains(card.Content, "Which size?") {
		t.Errorf("card %q", card.Content)
	}
	b.waitScreen("Codex's question dialog", func(s string) bool { return strings.Contains(s, "Question 1/2") })
	b.srv.Click(card.ID, action(t, card, "qb"), b.owner) // the first question's first option: Red
	card = b.waitCardText(card, "→ Red")
	var other string
	for _, id := range card.CustomIDs() {
		if strings.HasSuffix(id, "|qo|1") {
			other = id
		}
	}
	if other == "" {
		t.Fatalf("no Other for the second question: %q", card.CustomIDs())
	}
	it := b.srv.Click(card.ID, other, b.owner)
	if r := b.srv.WaitResponse(it, 5*time.Second); r.ResponseType != 9 {
		t.Fatalf("Other answered %d, want a modal", r.ResponseType)
	}
	b.srv.SubmitModal(it, b.owner, map[string]string{"text": "green please"})
	b.waitCardText(card, "Answered** by")
	fake.WaitRequest(t, long, "the answers", func(r fakeresponses.Request) bool {
		return len(r.Outputs) == 1 && strings.Contains(r.Outputs[0].Output, `"color":{"answers":["Red"]}`) &&
			strings.Contains(r.Outputs[0].Output, `"size":{"answers":["None of the above","user_note: green please"]}`)
	})
}

// A plan Codex proposes in Plan mode comes as a plan card, answered from
// Discord with the keys of Codex's "Implement this plan?" dialog: Keep
// planning is its No with the feedback as the next message, and Yes
// implements it (Codex submits "Implement the plan.").
func TestCodexPlanCard(t *testing.T) {
	t.Parallel()
	b, fake := newCodexBridge(t)
	p := b.projects[1]
	fake.Script("SCN_CXK_PLAN", fakeresponses.Text("Here is the plan.\n\n<proposed_plan>\n1. Do SCN_STEP_A\n2. Do B\n</proposed_plan>"))
	fake.Script("add tests too", fakeresponses.Text("Here is the new plan.\n\n<proposed_plan>\n1. Do SCN_STEP_A\n2. Add tests\n</proposed_plan>"))

	b.planMode(p)

	b.say(p, "plan SCN_CXK_PLAN")
	card := b.waitCard(p, "the plan card", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "Do SCN_STEP_A") })
	if !strings.Contains(card.Content, "Codex's plan") {
		t.Errorf("card %q", card.Content)
	}
	b.waitScreen("Codex's plan dialog", func(s string) bool { return strings.Contains(s, "Implement this plan?") })
	it := b.srv.Click(card.ID, action(t, card, "plankeep"), b.owner)
	if r := b.srv.WaitResponse(it, 5*time.Second); r.ResponseType != 9 {
		t.Fatalf("Keep planning answered %d, want a modal", r.ResponseType)
	}
	b.srv.SubmitModal(it, b.owner, map[string]string{"text": "add tests too"})
	b.waitCardText(card, "Keep planning")
	fake.WaitRequest(t, long, "the feedback as the next message", func(r fakeresponses.Request) bool { return r.LastUserText == "add tests too" })

	card = b.waitCard(p, "the new plan's card", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "Add tests") })
	b.waitScreen("the new plan's dialog", func(s string) bool { return strings.Contains(s, "Implement this plan?") })
	b.srv.Click(card.ID, action(t, card, "plandefault"), b.owner)
	b.waitCardText(card, "Plan approved** by")
	fake.WaitRequest(t, long, "Codex implementing the plan", func(r fakeresponses.Request) bool { return r.LastUserText == "Implement the plan." })
	b.waitReply(p, "ok: Implement the plan.")
}

// planMode puts the Codex session in Plan mode as the person does in the
// terminal (Shift+Tab; ccbridge's /mode is not built for Codex), once a
// first turn has started it and Codex is idle again: a Shift+Tab while its
// turn still ends was seen lost, so one that did not take is sent again.
func (b *bridge) planMode(p *project) {
	b.t.Helper()
	b.say(p, "hello first")
	b.waitReply(p, "ok: hello first")
	const plan = "Plan mode (shift+tab to cycle)"
	for try := 0; ; try++ {
		b.waitScreen("Codex idle", func(s string) bool {
			return strings.Contains(s, "Ask Codex to do anything") && !strings.Contains(s, "esc to interrupt")
		})
		if err := b.tmux.SendKeys(b.t.Context(), b.panes()[0].ID, tmux.KeyShiftTab); err != nil {
			b.t.Fatal(err)
		}
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if screen, _ := b.tmux.Capture(b.t.Context(), b.panes()[0].ID, 0); strings.Contains(screen, plan) {
				return
			}
		}
		if try == 2 {
			b.waitScreen("Plan mode", func(s string) bool { return strings.Contains(s, plan) })
			return
		}
	}
}
