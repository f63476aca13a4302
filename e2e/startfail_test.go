//go:build e2e

package e2e

import (
	"strings"
	"testing"
)

// Claude refusing its arguments: the phone gets 👀 at once (a session is
// starting), then Claude's own error line, not ccbridge's guess, and no
// pane is left (first contact 2, findings 5 and 6).
func TestSessionBadArgsReportClaudesOwnError(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, `args = ["--no-such-flag"]`)
	p := b.projects[0]
	m := b.say(p, "hello")
	b.waitReaction(m, "👀")
	notice := b.waitReply(p, "Could not start Claude")
	if !strings.Contains(notice.Content, "error: unknown option '--no-such-flag'") || strings.Contains(notice.Content, "check [claude].command") {
		t.Fatalf("notice = %q", notice.Content)
	}
	b.waitReaction(m, "⚠️")
	if panes := b.panes(); len(panes) != 0 {
		t.Fatalf("panes left: %+v", panes)
	}
}
