//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
	"github.com/ccbridge/ccbridge/internal/testutil/fakemodel"
)

// TestBashCardWithALinkIsApprovedWithPreviewsOn (security review 3,
// finding 9): the fake Discord previews links as Discord does, a moment
// after a message is posted; a Bash card whose description links to a
// page carries SUPPRESS_EMBEDS, so no preview joins what it shows, and it
// is approved from Discord.
func TestBashCardWithALinkIsApprovedWithPreviewsOn(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	bash := b.projects[0]
	b.model.Script("SCN_LINKED", fakemodel.Tool("", "Bash", map[string]any{"command": "touch linked.txt",
		"description": "Create linked.txt as https://docs.example/guide says"}))
	b.say(bash, "SCN_LINKED")
	card := b.waitCard(bash, "the Bash card", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "touch linked.txt") })
	if !strings.Contains(card.Content, "https://docs.example/guide") {
		t.Fatalf("the card does not show the link: %q", card.Content)
	}
	time.Sleep(fakediscord.PreviewDelay + 500*time.Millisecond) // Discord's preview would have come
	if now := b.cardNow(card); now.Flags&4 == 0 || len(now.Embeds) != 0 {
		t.Fatalf("the card: flags %d, %d embeds", now.Flags, len(now.Embeds))
	}
	b.srv.Click(card.ID, action(t, card, "allow"), b.owner)
	b.waitCardText(card, "Allowed** by <@"+b.owner.ID+">")
	b.waitReply(bash, "Done.")
	if _, err := os.Stat(filepath.Join(bash.dir, "linked.txt")); err != nil {
		t.Fatalf("the allowed command did not run: %v", err)
	}
}

// TestPlanCardWithALinkIsApprovedWithPreviewsOn: the same for a plan that
// cites a page.
func TestPlanCardWithALinkIsApprovedWithPreviewsOn(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	plan := b.projects[0]
	setMode(t, b, "plan")
	b.model.Script("SCN_LINKED_PLAN", linkedPlanSteps...)
	b.say(plan, "SCN_LINKED_PLAN")
	pcard := b.waitCard(plan, "the plan card", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "Claude's plan") })
	if !strings.Contains(pcard.Content, "https://docs.example/migrations") {
		t.Fatalf("the plan card does not show the link: %q", pcard.Content)
	}
	time.Sleep(fakediscord.PreviewDelay + 500*time.Millisecond)
	b.srv.Click(pcard.ID, action(t, pcard, "planaccept"), b.owner)
	b.waitCardText(pcard, "Plan approved")
}

// linkedPlanSteps are planSteps with a plan that cites a page.
var linkedPlanSteps = []fakemodel.Step{
	{Dynamic: func(r fakemodel.Request) fakemodel.Step {
		body, _ := json.Marshal(r.Body)
		path := planFile.FindString(string(body))
		return fakemodel.Tool("", "Write", map[string]any{"file_path": path,
			"content": "# Plan\n\n1. Read https://docs.example/migrations\n2. Write the migration\n"})
	}},
	fakemodel.Tool("", "ToolSearch", map[string]any{"query": "select:ExitPlanMode"}),
	fakemodel.Tool("", "ExitPlanMode", map[string]any{}),
}
