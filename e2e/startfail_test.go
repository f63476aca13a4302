//go:build e2e

package e2e

import (
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/testutil/fakemodel"
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

// The API refusing Claude's key: the real CLI ends the turn with
// authentication_failed; the phone is told what to do on the machine, and
// the failed turn has no cost footer even with footers on (first contact
// 2, finding 2).
func TestRelayAuthFailureSaysWhatToDo(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	// Claude retries a 401 ten times, for minutes, unless told not to.
	b.reconfigure(func(cfg string) string {
		cfg = strings.Replace(cfg, "env = { ", "env = { CLAUDE_CODE_MAX_RETRIES = \"0\", ", 1)
		return strings.ReplaceAll(cfg, "  footer = \"off\"\n", "  footer = \"on\"\n")
	})
	p := b.projects[0]
	b.model.Script("SCN_AUTH", fakemodel.Step{Status: 401, ErrMsg: "invalid x-api-key"})
	b.say(p, "SCN_AUTH")
	reply := b.waitReply(p, "Claude's turn failed")
	if !strings.Contains(reply.Content, "(authentication_failed)") || !strings.Contains(reply.Content, "ANTHROPIC_API_KEY") || strings.Contains(reply.Content, "\n-# ") {
		t.Fatalf("reply = %q", reply.Content)
	}
}
