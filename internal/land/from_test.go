package land

import (
	"context"
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/audit"
	"github.com/ccbridge/ccbridge/internal/worktree"
)

// committing records the messages of the commits and merges it makes.
type committing struct {
	git
	messages []string
}

func (g *committing) CommitAll(_ context.Context, _, message string) (string, error) {
	g.messages = append(g.messages, message)
	return "c0ffee00", nil
}

func (g *committing) Merge(_ context.Context, m worktree.MergeSpec) (worktree.MergeResult, error) {
	g.messages = append(g.messages, m.Message)
	return worktree.MergeResult{Commit: "beef0000"}, nil
}

// A commit and a merge name the front end they were asked from, the
// server's platform: Discord's words stay as they were, and a Telegram
// server's say Telegram; the audit log records the same.
func TestLandingNamesItsFrontEnd(t *testing.T) {
	for from, words := range map[string]string{audit.FromDiscord: "from Discord by o (1)", audit.FromTelegram: "from Telegram by o (1)"} {
		g := &committing{}
		l := lander(g)
		l.AuditDir = t.TempDir()
		l.Commit(context.Background(), "k", Target{Server: "s", Project: "p", Dir: "/w", Label: "x", From: from}, "fix it", person)
		l.Merge(context.Background(), "k", Target{Server: "s", Project: "p", Tree: true, Dir: "/w", Repo: "/r", Branch: "ccbridge/x", Base: "b0", From: from}, person, "")
		if len(g.messages) != 2 || !strings.Contains(g.messages[0], "Committed "+words+" through ccbridge.") || !strings.Contains(g.messages[1], "Merged "+words+" through ccbridge.") {
			t.Errorf("%s: messages %q, want them %q", from, g.messages, words)
		}
		es, err := audit.Last(l.AuditDir, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(es) == 0 || es[0].From != from {
			t.Errorf("%s: audit entries %+v", from, es)
		}
	}
}
