package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Diff is a working tree's change against a base commit: the commits since
// it and the uncommitted and untracked files (not ignored ones).
type Diff struct {
	Stat  string // git diff --stat
	Patch string // the whole patch, binary files included
	Files int
}

// Empty reports whether there is no change.
func (d Diff) Empty() bool { return strings.TrimSpace(d.Patch) == "" }

// Diff returns the change of the working tree at dir against base (a
// commit; "HEAD" for uncommitted changes only). Untracked files are
// included through a temporary index, so the real index is left as it was.
func (g *Git) Diff(ctx context.Context, dir, base string) (Diff, error) {
	var d Diff
	idx, err := os.CreateTemp("", "ccbridge-index-*")
	if err != nil {
		return d, fmt.Errorf("diff: %w", err)
	}
	idx.Close()
	defer os.Remove(idx.Name())
	ig := &Git{run: g.run, env: append(append([]string(nil), g.env...), "GIT_INDEX_FILE="+idx.Name())}
	if _, err := ig.git(ctx, dir, "read-tree", "HEAD"); err != nil {
		return d, err
	}
	if _, err := ig.git(ctx, dir, append([]string{"add", "-A", "--"}, notTrees...)...); err != nil {
		return d, err
	}
	if d.Stat, err = ig.git(ctx, dir, "diff", "--cached", "--stat=100", base); err != nil {
		return d, err
	}
	if d.Patch, err = ig.git(ctx, dir, "diff", "--cached", "--binary", base); err != nil {
		return d, err
	}
	names, err := ig.git(ctx, dir, "diff", "--cached", "--name-only", base)
	if err != nil {
		return d, err
	}
	if names != "" {
		d.Files = len(strings.Split(names, "\n"))
	}
	return d, nil
}

// identity gives git an author and committer when none is configured
// (a daemon started by a service manager often has no ~/.gitconfig).
func (g *Git) identity(ctx context.Context, dir string) []string {
	if out, err := g.git(ctx, dir, "config", "user.email"); err == nil && out != "" {
		return nil
	}
	return []string{"-c", "user.name=ccbridge", "-c", "user.email=ccbridge@localhost"}
}

// notTrees is the pathspec of a checkout's files without ccbridge's
// worktrees (under .claude/worktrees), which git would otherwise add as
// embedded repositories when they are not ignored.
var notTrees = []string{".", ":(exclude).claude/worktrees"}

// ErrNothingToCommit is returned by CommitAll for a clean working tree.
var ErrNothingToCommit = errors.New("nothing to commit: the working tree is clean")

// CommitAll commits every change in the working tree at dir (untracked
// files too; ignored ones not) and returns the new commit.
func (g *Git) CommitAll(ctx context.Context, dir, message string) (string, error) {
	status, err := g.git(ctx, dir, append([]string{"status", "--porcelain", "--"}, notTrees...)...)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(status) == "" {
		return "", ErrNothingToCommit
	}
	if _, err := g.git(ctx, dir, append([]string{"add", "-A", "--"}, notTrees...)...); err != nil {
		return "", err
	}
	args := append(g.identity(ctx, dir), "commit", "-q", "--no-verify", "-m", message)
	if _, err := g.git(ctx, dir, args...); err != nil {
		return "", err
	}
	return g.Head(ctx, dir)
}

// MergeResult says how a merge went.
type MergeResult struct {
	FastForward bool
	Commit      string   // the base branch's new head
	Conflicts   []string // files in conflict (the merge was aborted)
}

// NotReadyError says why a merge was not tried; nothing was changed.
type NotReadyError struct{ Reason string }

func (e *NotReadyError) Error() string { return e.Reason }

// Merge merges branch into the branch checked out at repo, which must be
// base and have no uncommitted changes to tracked files (otherwise a
// *NotReadyError and nothing changes). It fast-forwards when it can, else
// makes a merge commit; on a conflict it aborts the merge, leaving both
// branches and the checkout as they were, and lists the files.
func (g *Git) Merge(ctx context.Context, repo, branch, base, message string) (MergeResult, error) {
	var res MergeResult
	cur, err := g.git(ctx, repo, "symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil {
		return res, &NotReadyError{Reason: "the project checkout is not on a branch (detached HEAD); check out " + base + " first"}
	}
	if cur != base {
		return res, &NotReadyError{Reason: fmt.Sprintf("the project checkout is on %s, not on %s (the branch the thread started from); check out %s first", cur, base, base)}
	}
	status, err := g.git(ctx, repo, "status", "--porcelain", "--untracked-files=no")
	if err != nil {
		return res, err
	}
	if strings.TrimSpace(status) != "" {
		var files []string
		for line := range strings.SplitSeq(status, "\n") {
			if len(line) > 3 {
				files = append(files, line[3:])
			}
		}
		return res, &NotReadyError{Reason: fmt.Sprintf("the project checkout has uncommitted changes (%s); commit or stash them first", strings.Join(files, ", "))}
	}
	if _, err := g.git(ctx, repo, "merge-base", "--is-ancestor", "HEAD", branch); err == nil {
		if _, err := g.git(ctx, repo, "merge", "-q", "--ff-only", branch); err != nil {
			return res, err
		}
		res.FastForward = true
		res.Commit, err = g.Head(ctx, repo)
		return res, err
	}
	args := append(g.identity(ctx, repo), "merge", "-q", "--no-ff", "--no-verify", "-m", message, branch)
	if _, err := g.git(ctx, repo, args...); err != nil {
		conflicts, cerr := g.git(ctx, repo, "diff", "--name-only", "--diff-filter=U")
		if cerr == nil && conflicts != "" {
			res.Conflicts = strings.Split(conflicts, "\n")
		}
		if _, aerr := g.git(ctx, repo, "merge", "--abort"); aerr != nil {
			return res, errors.Join(err, aerr)
		}
		if len(res.Conflicts) > 0 {
			return res, nil
		}
		return res, err
	}
	res.Commit, err = g.Head(ctx, repo)
	return res, err
}

// Discard throws away the working tree's uncommitted changes: tracked
// files go back to HEAD and untracked ones are removed (ignored files and
// commits stay).
func (g *Git) Discard(ctx context.Context, dir string) error {
	if _, err := g.git(ctx, dir, "reset", "-q", "--hard", "HEAD"); err != nil {
		return err
	}
	_, err := g.git(ctx, dir, append([]string{"clean", "-q", "-fd", "--"}, notTrees...)...)
	return err
}

// CurrentBranch returns the branch checked out at dir ("" when detached).
func (g *Git) CurrentBranch(ctx context.Context, dir string) string {
	out, err := g.git(ctx, dir, "symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil {
		return ""
	}
	return out
}

// Contains reports whether commit is an ancestor of (or equal to) ref.
func (g *Git) Contains(ctx context.Context, repo, ref, commit string) bool {
	_, err := g.git(ctx, repo, "merge-base", "--is-ancestor", commit, ref)
	return err == nil
}
