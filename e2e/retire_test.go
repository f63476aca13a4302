//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
	"github.com/ccbridge/ccbridge/internal/testutil/fakemodel"
	"github.com/ccbridge/ccbridge/internal/testutil/tmuxtest"
	"github.com/ccbridge/ccbridge/internal/tmux"
)

// answerInTerminal presses key in the session's pane while screen is
// shown there (a key sent while the dialog is still drawing is lost),
// until the card says want.
func (b *bridge) answerInTerminal(p *project, card *fakediscord.Message, screen string, key tmux.Key, want string) {
	b.t.Helper()
	s, _ := b.store.Sessions.Get(p.key)
	tmuxtest.WaitScreen(b.t, b.tmux, s.PaneID, screen, long)
	deadline := time.Now().Add(long)
	for !strings.Contains(b.cardNow(card).Content, want) {
		if time.Now().After(deadline) {
			b.t.Fatalf("the card never said %q", want)
		}
		if now, _ := b.tmux.Capture(context.Background(), s.PaneID, 0); strings.Contains(now, screen) {
			if err := b.tmux.SendKeys(context.Background(), s.PaneID, key); err != nil {
				b.t.Fatal(err)
			}
		}
		time.Sleep(time.Second)
	}
}

// A question and a plan answered in the terminal retire their cards: the
// PostToolUse of those tools does not repeat the PermissionRequest's input
// (answers added to a question; a plan's filled-in text missing), yet it is
// the same call.
func TestQuestionAndPlanAnsweredInTerminal(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 2, "")
	ask, plan := b.projects[0], b.projects[1]
	oneQuestion := map[string]any{"questions": askInput["questions"].([]any)[:1]}
	b.model.Script("SCN_TERM_ASK", fakemodel.Tool("", "AskUserQuestion", oneQuestion))
	b.say(ask, "SCN_TERM_ASK")
	card := b.waitCard(ask, "the question card", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "Which color do you prefer?") })
	b.answerInTerminal(ask, card, "Enter to select", "2", "Answered in the terminal")
	b.model.WaitRequest(t, long, "the terminal's answer", func(r fakemodel.Request) bool {
		return len(r.ToolResults) == 1 && strings.Contains(r.ToolResults[0].Content, `"Which color do you prefer?"="Green"`)
	})

	setMode(t, b, "plan")
	b.model.Script("SCN_TERM_PLAN", planSteps...)
	b.say(plan, "SCN_TERM_PLAN")
	pcard := b.waitCard(plan, "the plan card", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "Claude's plan") })
	b.answerInTerminal(plan, pcard, "Would you like to proceed?", "2", "Answered in the terminal")
}
