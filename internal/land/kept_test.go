package land

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/worktree"
)

// A kept worktree's message says why it was kept, fits with room for one
// note more, and its base survives the question and an outcome added
// under it; its controls carry the fingerprint of what was shown.
func TestKeptWorktreeMessage(t *testing.T) {
	ids := func(args ...string) string { return strings.Join(args, "|") }
	rel := session.Release{Path: "/w/t", Branch: "ccbridge/t", Changes: worktree.Changes{Dirty: true, Ahead: 2, Ignored: []string{".env"},
		DiffStat: strings.Repeat(" a.go | 1 +\n", 1000) + " 1000 files changed", Fingerprint: "fp1"}}
	m := KeptWorktree(ThreadRef("42", "", false), rel, ids)
	if !strings.HasPrefix(m.Content, "📦 The worktree of <#42> was kept: it has uncommitted changes and 1 file(s) git ignores (such as .env) and 2 commit(s) beyond its base.") {
		t.Errorf("head: %q", m.Content[:200])
	}
	if n := utf8.RuneCountInString(m.Content); n > chat.Limit-keptNote {
		t.Errorf("%d characters leave no room for a note", n)
	}
	if m.Rows[0].Buttons[0].CustomID != "delete|fp1" || m.Rows[0].Buttons[1].CustomID != "keep" {
		t.Errorf("controls %+v", m.Rows)
	}
	asked := ConfirmDelete(m.Content, "fp1", ids)
	if KeptBase(asked.Content) != m.Content || KeptBase(m.Content+KeptRunning) != m.Content {
		t.Error("the base is not the message as first posted")
	}
	if got := ThreadRef("42", "*bold* @x", true); got != "the deleted thread “"+chat.Plain("*bold* @x")+"”" {
		t.Errorf("deleted thread: %q", got)
	}
}
