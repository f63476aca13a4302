//go:build integration

package worktree

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/execx"
)

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// thread makes a worktree on its own branch from main's head.
func thread(t *testing.T, g *Git, root, name string) (path, branch, base string) {
	t.Helper()
	ctx := context.Background()
	base, _ = g.Head(ctx, root)
	branch, dir := Names(name, "1300000000000000"+name)
	path = Dir(root, dir)
	if err := g.Add(ctx, root, path, branch, base); err != nil {
		t.Fatal(err)
	}
	return path, branch, base
}

func TestDiffCommitMergeDiscard(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	ctx := context.Background()
	g := New(execx.Exec{})
	root := repo(t, false)
	path, branch, base := thread(t, g, root, "111")

	write(t, filepath.Join(path, "README"), "hi\nmore\n")
	write(t, filepath.Join(path, "new.txt"), "new file\n")
	d, err := g.Diff(ctx, path, base)
	if err != nil {
		t.Fatal(err)
	}
	if d.Files != 2 || !strings.Contains(d.Patch, "+more") || !strings.Contains(d.Patch, "+new file") || !strings.Contains(d.Stat, "new.txt") {
		t.Fatalf("diff %+v", d)
	}
	if st := gitOut(t, path, "status", "--porcelain"); !strings.Contains(st, "?? new.txt") {
		t.Fatalf("Diff touched the index: %q", st)
	}
	if _, err := g.CommitAll(ctx, path, "thread work"); err != nil {
		t.Fatal(err)
	}
	if _, err := g.CommitAll(ctx, path, "again"); !errors.Is(err, ErrNothingToCommit) {
		t.Fatalf("second commit: %v", err)
	}
	// Committed work still shows against the base.
	if d, _ := g.Diff(ctx, path, base); d.Files != 2 {
		t.Fatalf("after commit: %+v", d)
	}

	// A dirty checkout: nothing changes.
	write(t, filepath.Join(root, "README"), "local edit\n")
	before := gitOut(t, root, "rev-parse", "HEAD")
	var nr *NotReadyError
	if _, err := g.Merge(ctx, MergeSpec{Repo: root, Tree: path, Branch: branch, Base: "main", Message: "m"}); !errors.As(err, &nr) || !strings.Contains(nr.Reason, "README") {
		t.Fatalf("dirty merge: %v", err)
	}
	if gitOut(t, root, "rev-parse", "HEAD") != before || gitOut(t, root, "status", "--porcelain", "--untracked-files=no") != "M README" {
		t.Fatal("a refused merge changed the checkout")
	}
	gitOut(t, root, "checkout", "README")

	// Fast-forward.
	res, err := g.Merge(ctx, MergeSpec{Repo: root, Tree: path, Branch: branch, Base: "main", Message: "m"})
	if err != nil || !res.FastForward || res.Commit != gitOut(t, root, "rev-parse", branch) {
		t.Fatalf("ff merge: %+v %v", res, err)
	}

	// A merge commit when main moved on.
	p2, b2, base2 := thread(t, g, root, "222")
	write(t, filepath.Join(root, "main.txt"), "on main\n")
	gitOut(t, root, "add", "main.txt")
	gitOut(t, root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "main moves")
	write(t, filepath.Join(p2, "side.txt"), "side\n")
	if _, err := g.CommitAll(ctx, p2, "side"); err != nil {
		t.Fatal(err)
	}
	_ = base2
	res, err = g.Merge(ctx, MergeSpec{Repo: root, Tree: p2, Branch: b2, Base: "main", Message: "Merge thread 222"})
	if err != nil || res.FastForward || len(res.Conflicts) > 0 {
		t.Fatalf("merge commit: %+v %v", res, err)
	}
	if parents := gitOut(t, root, "log", "-1", "--format=%P"); len(strings.Fields(parents)) != 2 {
		t.Fatalf("not a merge commit: %q", parents)
	}

	// A conflict: aborted, both branches as they were, files named.
	p3, b3, _ := thread(t, g, root, "333")
	write(t, filepath.Join(root, "README"), "main says\n")
	gitOut(t, root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "main edits README")
	write(t, filepath.Join(p3, "README"), "thread says\n")
	if _, err := g.CommitAll(ctx, p3, "thread edits README"); err != nil {
		t.Fatal(err)
	}
	mainBefore, threadBefore := gitOut(t, root, "rev-parse", "main"), gitOut(t, root, "rev-parse", b3)
	res, err = g.Merge(ctx, MergeSpec{Repo: root, Tree: p3, Branch: b3, Base: "main", Message: "m"})
	if err != nil || !slices.Equal(res.Conflicts, []string{"README"}) {
		t.Fatalf("conflict: %+v %v", res, err)
	}
	if gitOut(t, root, "rev-parse", "main") != mainBefore || gitOut(t, root, "rev-parse", b3) != threadBefore ||
		gitOut(t, root, "status", "--porcelain", "--untracked-files=no") != "" {
		t.Fatal("a conflicted merge left changes")
	}

	// The checkout's own changes never include the thread worktrees
	// (not ignored here), and discarding there leaves them alone.
	if d, err := g.Diff(ctx, root, "HEAD"); err != nil || !d.Empty() {
		t.Fatalf("the checkout's diff shows the worktrees: %+v %v", d, err)
	}
	if _, err := g.CommitAll(ctx, root, "x"); !errors.Is(err, ErrNothingToCommit) {
		t.Fatalf("commit in the checkout: %v", err)
	}
	if err := g.Discard(ctx, root); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(p3, "README")); err != nil {
		t.Fatalf("discarding in the checkout removed a worktree: %v", err)
	}

	// Discard.
	write(t, filepath.Join(p3, "README"), "scratch\n")
	write(t, filepath.Join(p3, "junk.txt"), "junk\n")
	if err := g.Discard(ctx, p3); err != nil {
		t.Fatal(err)
	}
	if st := gitOut(t, p3, "status", "--porcelain"); st != "" {
		t.Fatalf("after discard: %q", st)
	}
}
