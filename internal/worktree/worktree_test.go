package worktree

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/ccbridge/ccbridge/internal/execx"
)

func TestParsePorcelain(t *testing.T) {
	out := "worktree /src/app\nHEAD 1111\nbranch refs/heads/main\n\nworktree /src/app/.claude/worktrees/fix-123456\nHEAD 2222\nbranch refs/heads/ccbridge/fix-123456\n\nworktree /tmp/old\nHEAD 3333\ndetached\nprunable gitdir file points to non-existent location\n"
	trees := parsePorcelain(out)
	if len(trees) != 3 || trees[1].Branch != "ccbridge/fix-123456" || !trees[2].Detached || !trees[2].Prunable || trees[0].Head != "1111" {
		t.Fatalf("trees = %+v", trees)
	}
}

func TestNames(t *testing.T) {
	for _, c := range []struct{ name, id, branch, dir string }{
		{"Fix the Parser!", "1300000000000000777", "ccbridge/fix-the-parser-000777", "fix-the-parser-000777"},
		{"", "42", "ccbridge/thread-42", "thread-42"},
		{"日本語 ../../x", "99", "ccbridge/x-99", "x-99"},
	} {
		b, d := Names(c.name, c.id)
		if b != c.branch || d != c.dir {
			t.Errorf("Names(%q, %q) = %q, %q", c.name, c.id, b, d)
		}
	}
}

// git is the argv of a git call in dir: every one switches off the
// programs a repository's config can name.
func git(dir string, args ...string) []string {
	return append(append([]string{"git", "-C", dir}, safeConfig...), args...)
}

// noDrivers is the lookup of the repository's own filter and merge
// drivers finding none.
func noDrivers(dir string) execx.Call {
	return execx.Call{Args: git(dir, "config", "-z", "--show-scope", "--get-regexp", `^(filter|merge)\..*\.(clean|smudge|process|driver)$`), Err: execx.Exit(1, "")}
}

func TestAddRefusesABranchInUse(t *testing.T) {
	f := execx.NewFake(t,
		execx.Call{Args: git("/r", "check-ref-format", "--branch", "ccbridge/x-1"), Stdout: "ccbridge/x-1\n"},
		execx.Call{Args: git("/r", "worktree", "list", "--porcelain"), Stdout: "worktree /r\nHEAD 1\nbranch refs/heads/main\n\nworktree /elsewhere\nHEAD 2\nbranch refs/heads/ccbridge/x-1\n"},
	)
	err := New(f).Add(context.Background(), "/r", "/r/.claude/worktrees/x-1", "ccbridge/x-1", "abc")
	var inUse *BranchInUseError
	if !errors.As(err, &inUse) || inUse.Path != "/elsewhere" {
		t.Fatalf("err = %v", err)
	}
}

func TestRemoveIsSafeByDefault(t *testing.T) {
	for name, c := range map[string]struct {
		status, ahead string
		want          error
	}{
		"dirty":   {"?? new.txt\n", "0\n", ErrDirty},
		"ahead":   {"", "2\n", ErrAhead},
		"ignored": {"!! .env\n", "0\n", ErrIgnored},
	} {
		f := execx.NewFake(t, inspectCalls(c.status, c.ahead)...)
		if err := New(f).Remove(context.Background(), "/r", "/w", "b", "base", false); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", name, err, c.want)
		}
	}
	clean := execx.NewFake(t, append(inspectCalls("", "0\n"),
		execx.Call{Args: git("/r", "worktree", "remove", "/w")},
		execx.Call{Args: git("/r", "branch", "-d", "b")},
		execx.Call{Args: git("/r", "worktree", "prune")},
	)...)
	if err := New(clean).Remove(context.Background(), "/r", "/w", "b", "base", false); err != nil {
		t.Fatal(err)
	}
	forced := execx.NewFake(t,
		execx.Call{Args: git("/r", "worktree", "remove", "--force", "/w")},
		execx.Call{Args: git("/r", "branch", "-D", "b")},
		execx.Call{Args: git("/r", "worktree", "prune")},
	)
	if err := New(forced).Remove(context.Background(), "/r", "/w", "b", "base", true); err != nil {
		t.Fatal(err)
	}
}

// inspectCalls are the git calls of Inspect on /w against base.
func inspectCalls(status, ahead string) []execx.Call {
	return []execx.Call{
		noDrivers("/w"),
		{Args: git("/w", "status", "--porcelain", "--ignored"), Stdout: status},
		{Args: git("/w", "rev-list", "--count", "base..HEAD"), Stdout: ahead},
		{Args: git("/w", "diff", "--stat", "--no-ext-diff", "--no-textconv", "base"), Stdout: ""},
		{Args: git("/w", "rev-parse", "--verify", "HEAD"), Stdout: "abc\n"},
		{Args: git("/w", "diff", "--no-color", "--no-ext-diff", "--no-textconv", "HEAD")},
	}
}

// The repository's own filter drivers are switched off for a read; the
// person's global ones (git-lfs) run.
func TestReaderSwitchesOffOnlyTheRepositorysFilters(t *testing.T) {
	f := execx.NewFake(t, execx.Call{Args: noDrivers("/w").Args,
		Stdout: "global\x00filter.lfs.clean\ngit-lfs clean -- %f\x00local\x00filter.a.b.clean\nevil\x00worktree\x00merge.m.driver\nx %A\x00local\x00filter.a.b.smudge\nevil\x00"})
	r, err := New(f).reader(context.Background(), "/w")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"-c", "filter.a.b.clean=", "-c", "filter.a.b.smudge=", "-c", "filter.a.b.process=", "-c", "filter.a.b.required=false"}
	if !slices.Equal(r.off, want) {
		t.Fatalf("overrides %q, want %q", r.off, want)
	}
}
