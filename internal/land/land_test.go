package land

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/worktree"
)

// git is a repository as the landing commands see it.
type git struct {
	Git       // the calls a test does not expect panic
	patch     string
	conflicts []string
	discarded bool
}

func (g *git) Diff(context.Context, string, string) (worktree.Diff, error) {
	return worktree.Diff{Stat: " a.go | 1 +\n 1 file changed", Patch: g.patch, Files: 1, Head: "c0ffee"}, nil
}
func (g *git) CurrentBranch(context.Context, string) string          { return "main" }
func (g *git) Contains(context.Context, string, string, string) bool { return true }
func (g *git) Merge(context.Context, worktree.MergeSpec) (worktree.MergeResult, error) {
	return worktree.MergeResult{Conflicts: g.conflicts}, nil
}
func (g *git) Discard(context.Context, string) error { g.discarded = true; return nil }

func lander(g Git) Lander {
	return Lander{Git: g, ID: func(key, action string, args ...string) string {
		return strings.Join(append([]string{key, action}, args...), "|")
	}}
}

var person = chat.User{ID: "1", Name: "o"}

// A merge with hundreds of conflicted files still answers within
// Discord's 2,000 characters, and says how many it did not list.
func TestMergeConflictAnswerFits(t *testing.T) {
	g := &git{}
	for i := range 400 {
		g.conflicts = append(g.conflicts, fmt.Sprintf("src/some/deep/package/file_%03d.go", i))
	}
	reply := lander(g).Merge(context.Background(), "k", Target{Tree: true, Dir: "/w", Repo: "/r", Branch: "ccbridge/x", Base: "b0"}, person, "")
	if n := utf8.RuneCountInString(reply.Content); n > chat.Limit {
		t.Fatalf("%d characters", n)
	}
	if !strings.Contains(reply.Content, "file_000.go") || !strings.Contains(reply.Content, "more") || !strings.Contains(reply.Content, "aborted") {
		t.Fatalf("reply = %q", reply.Content)
	}
}

// The discard confirmation carries the hash of the patch it showed, and
// discards nothing once the changes are others: it asks anew.
func TestDiscardOnlyWhatWasShown(t *testing.T) {
	g := &git{patch: "+x"}
	l := lander(g)
	q := l.AskDiscard(context.Background(), "k", Target{Dir: "/w", Label: "here"}, person)
	if len(q.Rows) != 1 || len(q.Rows[0].Buttons) != 2 {
		t.Fatalf("question = %+v", q)
	}
	shown := strings.Split(q.Rows[0].Buttons[0].CustomID, "|")[2]
	g.patch = "+y"
	again := l.Discard(context.Background(), "k", Target{Dir: "/w"}, shown, person)
	if g.discarded || !strings.Contains(again.Content, "Nothing was discarded") || len(again.Rows) == 0 {
		t.Fatalf("discarded changes never shown: %q", again.Content)
	}
	l.Discard(context.Background(), "k", Target{Dir: "/w"}, chat.ShortHash("+y"), person)
	if !g.discarded {
		t.Fatal("the changes shown were not discarded")
	}
}

// A stat too long for a message keeps git's total and says what it left
// out.
func TestFitStatKeepsTheTotal(t *testing.T) {
	var lines []string
	for i := range 500 {
		lines = append(lines, fmt.Sprintf(" file_%03d.go | 1 +", i))
	}
	stat := strings.Join(append(lines, " 500 files changed"), "\n")
	got := FitStat(stat, 300)
	if utf8.RuneCountInString(got) > 300 || !strings.HasSuffix(got, "500 files changed") || !strings.Contains(got, "more line(s) not shown") {
		t.Fatalf("FitStat = %q", got)
	}
}
