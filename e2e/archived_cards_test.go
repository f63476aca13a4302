//go:build e2e

package e2e

import (
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
	"github.com/ccbridge/ccbridge/internal/testutil/fakemodel"
)

// A card left pending in a thread that Discord then archives cannot be
// edited (50083): when it expires, its outcome is posted in the parent
// channel, naming the thread, and the thread stays archived.
func TestCardOfAnArchivedThreadClosesInTheParent(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "prompt_timeout = \"4s\"")
	p := b.projects[0]
	th := threadOf(p, b.srv.StartThread(p.channel, "quiet", b.owner))
	b.model.Script("SCN_ARCHIVED_CARD", fakemodel.Tool("", "Bash", map[string]any{"command": "touch archived.txt", "description": "Left alone"}))
	b.say(th, "SCN_ARCHIVED_CARD")
	card := b.waitCard(th, "the card", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "touch archived.txt") })
	b.srv.AutoArchive(th.channel)
	notice := b.srv.WaitMessage(long, "the card's outcome in the project channel", func(m *fakediscord.Message) bool {
		return m.ChannelID == p.channel && m.Author.Bot && strings.Contains(m.Content, "<#"+th.channel+">")
	})
	if !strings.Contains(notice.Content, "Expired") {
		t.Errorf("notice = %q, want the card's outcome (expired)", notice.Content)
	}
	if ch, _ := b.srv.Channel(th.channel); !ch.Archived {
		t.Error("closing the card unarchived the thread")
	}
	if cur := b.cardNow(card); cur.Edits != 0 || strings.Contains(cur.Content, "Expired") {
		t.Errorf("the card in the archived thread changed: %d edits, %q", cur.Edits, cur.Content)
	}
}
