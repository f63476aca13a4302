//go:build integration

package worktree

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/execx"
	"github.com/ccbridge/ccbridge/internal/testutil/testenv"
)

// repo makes a repository in a temp dir, with one commit unless empty.
func repo(t *testing.T, empty bool) string {
	t.Helper()
	testenv.NeedTool(t, "git")
	dir := t.TempDir()
	run := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q", "-b", "main")
	if !empty {
		os.WriteFile(filepath.Join(dir, "README"), []byte("hi\n"), 0o644)
		run("add", "README")
		run("commit", "-q", "-m", "first")
	}
	return dir
}

func TestWorktreeLifecycleOnRealGit(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	ctx := context.Background()
	g := New(execx.Exec{})
	if _, err := g.Root(ctx, t.TempDir()); !errors.Is(err, ErrNotRepo) {
		t.Fatalf("Root of a plain dir: %v", err)
	}
	if _, err := g.Head(ctx, repo(t, true)); !errors.Is(err, ErrNoCommits) {
		t.Fatalf("Head of an empty repo: %v", err)
	}
	r := repo(t, false)
	root, err := g.Root(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	base, err := g.Head(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	branch, name := Names("Fix it", "1300000000000000123")
	path := Dir(root, name)
	if err := g.Add(ctx, root, path, branch, base); err != nil {
		t.Fatal(err)
	}
	if err := g.Add(ctx, root, path, branch, base); err != nil {
		t.Fatalf("adding the same worktree again: %v", err)
	}
	if err := g.Add(ctx, root, Dir(root, "other"), branch, base); err == nil || !strings.Contains(err.Error(), "already checked out") {
		t.Fatalf("same branch elsewhere: %v", err)
	}
	os.WriteFile(filepath.Join(path, "new.txt"), []byte("work\n"), 0o644)
	c, err := g.Inspect(ctx, path, base)
	if err != nil || !c.Dirty || !strings.Contains(c.DiffStat, "new.txt") {
		t.Fatalf("Inspect = %+v, %v", c, err)
	}
	if err := g.Remove(ctx, root, path, branch, base, false); !errors.Is(err, ErrDirty) {
		t.Fatalf("removing a dirty worktree: %v", err)
	}
	if _, err := os.Stat(filepath.Join(path, "new.txt")); err != nil {
		t.Fatal("a refused removal lost the file")
	}
	if err := g.Remove(ctx, root, path, branch, base, true); err != nil {
		t.Fatalf("confirmed removal: %v", err)
	}
	trees, _ := g.List(ctx, root)
	if len(trees) != 1 {
		t.Fatalf("worktrees left: %+v", trees)
	}
	// A clean one goes with its branch.
	if err := g.Add(ctx, root, path, branch, base); err != nil {
		t.Fatal(err)
	}
	if err := g.Remove(ctx, root, path, branch, base, false); err != nil {
		t.Fatalf("clean removal: %v", err)
	}
	if out, _ := exec.Command("git", "-C", root, "branch", "--list", branch).Output(); strings.TrimSpace(string(out)) != "" {
		t.Fatalf("branch %s left: %s", branch, out)
	}
}

// A worktree whose status looks clean can hold files git ignores (.env,
// local data): a plain `worktree remove` would delete them, so it is kept.
func TestIgnoredFilesKeepTheWorktree(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	ctx := context.Background()
	g := New(execx.Exec{})
	root := repo(t, false)
	cmd := exec.Command("sh", "-c", "echo .env > .gitignore && git add .gitignore && git commit -q -m ignore")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	base, _ := g.Head(ctx, root)
	branch, name := Names("secrets", "1300000000000000555")
	path := Dir(root, name)
	if err := g.Add(ctx, root, path, branch, base); err != nil {
		t.Fatal(err)
	}
	clean, err := g.Inspect(ctx, path, base)
	if err != nil || clean.Lost() || clean.Fingerprint == "" {
		t.Fatalf("fresh worktree: %+v, %v", clean, err)
	}
	if err := os.WriteFile(filepath.Join(path, ".env"), []byte("TOKEN=secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := g.Inspect(ctx, path, base)
	if err != nil || c.Dirty || !c.Lost() || len(c.Ignored) != 1 || c.Ignored[0] != ".env" || !strings.Contains(c.DiffStat, ".env") {
		t.Fatalf("Inspect with an ignored file = %+v, %v", c, err)
	}
	if c.Fingerprint == clean.Fingerprint {
		t.Fatal("the fingerprint did not change with a new ignored file")
	}
	if err := g.Remove(ctx, root, path, branch, base, false); !errors.Is(err, ErrIgnored) || !errors.Is(err, ErrDirty) {
		t.Fatalf("removing a worktree with an ignored file: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(path, ".env")); err != nil || string(b) != "TOKEN=secret\n" {
		t.Fatalf("the ignored file was lost: %q, %v", b, err)
	}
	// The fingerprint follows HEAD and edits of tracked files too.
	again, _ := g.Inspect(ctx, path, base)
	if again.Fingerprint != c.Fingerprint {
		t.Fatal("the fingerprint changed with nothing changed")
	}
	if err := os.WriteFile(filepath.Join(path, "README"), []byte("edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	edited, _ := g.Inspect(ctx, path, base)
	if err := os.WriteFile(filepath.Join(path, "README"), []byte("edited again\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	edited2, _ := g.Inspect(ctx, path, base)
	if edited.Fingerprint == c.Fingerprint || edited2.Fingerprint == edited.Fingerprint {
		t.Fatal("the fingerprint did not follow edits of a tracked file")
	}
}
