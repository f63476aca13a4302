package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// MergeResult says how a merge went.
type MergeResult struct {
	FastForward bool
	Commit      string   // the base branch's new head
	Conflicts   []string // files in conflict (the merge was aborted)
}

// NotReadyError says why a landing operation was not tried; nothing was
// changed.
type NotReadyError struct{ Reason string }

func (e *NotReadyError) Error() string { return e.Reason }

// MergeSpec is what to merge, and where.
type MergeSpec struct {
	Repo   string // the project checkout, which must be on Base
	Tree   string // the thread's worktree, which must be on Branch
	Branch string // the thread's branch (without refs/heads/)
	Base   string // the branch it lands on (without refs/heads/)
	// Commit is the commit a person was shown at the head of Branch (at
	// least ShownLen of its leading hex digits): the merge refuses once
	// the branch moved. Empty: its head now.
	Commit  string
	Message string
}

// Merge merges the thread's branch into the branch checked out at the
// project checkout. Otherwise nothing changes and a *NotReadyError says
// why: the checkout is not on Base or has uncommitted changes to tracked
// files, the worktree is not on Branch (what /diff showed is not what
// would land), Branch moved past Commit, or the merge would overwrite
// files the checkout holds and git ignores (.env). The branch is named
// refs/heads/<branch> throughout, so a tag of the same name is never
// what lands. It fast-forwards when it can, else makes a merge commit;
// on a conflict it aborts the merge, leaving both branches and the
// checkout as they were, and lists the files. No hook runs.
func (g *Git) Merge(ctx context.Context, m MergeSpec) (MergeResult, error) {
	var res MergeResult
	if err := g.writable(ctx, m.Repo); err != nil {
		return res, err
	}
	switch cur := g.CurrentBranch(ctx, m.Repo); cur {
	case "":
		return res, &NotReadyError{Reason: "the project checkout is not on a branch (detached HEAD); check out " + m.Base + " first"}
	case m.Base:
	default:
		return res, &NotReadyError{Reason: fmt.Sprintf("the project checkout is on %s, not on %s (the branch the thread started from); check out %s first", cur, m.Base, m.Base)}
	}
	if cur := g.CurrentBranch(ctx, m.Tree); cur != m.Branch {
		on := "a detached HEAD"
		if cur != "" {
			on = "branch " + cur
		}
		return res, &NotReadyError{Reason: fmt.Sprintf("the thread's worktree has %s checked out, not its branch %s, so /diff does not show what would land; check out %s there first", on, m.Branch, m.Branch)}
	}
	head, err := g.git(ctx, m.Repo, "rev-parse", "--verify", "--quiet", "refs/heads/"+m.Branch+"^{commit}")
	if err != nil {
		return res, &NotReadyError{Reason: "the thread's branch " + m.Branch + " does not exist"}
	}
	if m.Commit != "" && (len(m.Commit) < ShownLen || !strings.HasPrefix(head, m.Commit)) {
		return res, &NotReadyError{Reason: fmt.Sprintf("the thread's branch moved since you were shown it (it was at %s, it is at %s now); run /diff again to see what it holds", short(m.Commit), short(head))}
	}
	status, err := g.git(ctx, m.Repo, "status", "--porcelain", "--untracked-files=no")
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
	if over, err := g.ignoredOverwritten(ctx, m.Repo, head); err != nil {
		return res, err
	} else if len(over) > 0 {
		return res, &NotReadyError{Reason: fmt.Sprintf("the merge would overwrite files of the project checkout that git ignores, and git keeps no copy of them (%s); move them away first", strings.Join(over, ", "))}
	}
	if _, err := g.git(ctx, m.Repo, "merge-base", "--is-ancestor", "HEAD", head); err == nil {
		if _, err := g.git(ctx, m.Repo, "merge", "-q", "--ff-only", head); err != nil {
			return res, g.failed(ctx, m, head, err)
		}
		res.FastForward = true
		res.Commit, err = g.Head(ctx, m.Repo)
		return res, err
	}
	args := append(g.identity(ctx, m.Repo), "merge", "-q", "--no-ff", "--no-verify", "-m", m.Message, head)
	if _, err := g.git(ctx, m.Repo, args...); err != nil {
		conflicts, cerr := g.git(ctx, m.Repo, "diff", "--name-only", "--diff-filter=U")
		if cerr == nil && conflicts != "" {
			res.Conflicts = strings.Split(conflicts, "\n")
		}
		if _, aerr := g.git(ctx, m.Repo, "merge", "--abort"); aerr != nil {
			return res, g.failed(ctx, m, head, errors.Join(err, aerr))
		}
		if len(res.Conflicts) > 0 {
			return res, nil
		}
		return res, g.failed(ctx, m, head, err)
	}
	res.Commit, err = g.Head(ctx, m.Repo)
	return res, err
}

// ShownLen is how many leading hex digits of a commit's name name it to
// Merge: 96 bits, which no one forges a commit to match, and short enough
// for a button's custom_id beside a long session key.
const ShownLen = 24

// ignoredOverwritten lists the entries of the checkout at repo, ignored
// by git, that merging commit would overwrite or remove: git treats them
// as expendable, but a .env is the person's and exists nowhere else. An
// entry E is at stake when, for a path P the merge writes, E is P, a
// leading directory of P (a file where git needs a directory), or lies
// under P (a directory where git needs a file).
func (g *Git) ignoredOverwritten(ctx context.Context, repo, commit string) ([]string, error) {
	top, err := g.Root(ctx, repo)
	if err != nil {
		return nil, err
	}
	names, err := g.git(ctx, top, "diff", "--name-only", "-z", "--no-renames", "HEAD", commit)
	if err != nil || names == "" {
		return nil, err
	}
	// Only what HEAD does not track; a wholly ignored directory comes as
	// one "dir/" entry, so node_modules costs one line.
	listed, err := g.git(ctx, top, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory")
	if err != nil || listed == "" {
		return nil, err
	}
	entries := map[string]bool{}   // ignored entries, without a trailing slash
	holds := map[string][]string{} // a directory: the ignored entries under it
	for e := range strings.SplitSeq(listed, "\x00") {
		e = strings.TrimSuffix(e, "/")
		if e == "" {
			continue
		}
		entries[e] = true
		for d := path.Dir(e); d != "."; d = path.Dir(d) {
			holds[d] = append(holds[d], e)
		}
	}
	seen := map[string]bool{}
	var hit []string
	add := func(e string) {
		if !seen[e] {
			seen[e] = true
			hit = append(hit, e)
		}
	}
	for p := range strings.SplitSeq(names, "\x00") {
		if p == "" {
			continue
		}
		for d := p; d != "."; d = path.Dir(d) {
			if entries[d] {
				add(d)
			}
		}
		for _, e := range holds[p] {
			add(e)
		}
	}
	// Name the files, not also each directory holding them.
	var out []string
	for _, e := range hit {
		if len(holds[e]) == 0 || !slices.ContainsFunc(holds[e], func(c string) bool { return seen[c] }) {
			out = append(out, e)
		}
	}
	return out, nil
}

// stateTimeout bounds the look at a checkout after a failed merge, which
// may follow a spent deadline.
const stateTimeout = 10 * time.Second

// failed adds to a failed merge what state it left the checkout in: the
// merge may have landed, or left a merge in progress or git's lock.
func (g *Git) failed(ctx context.Context, m MergeSpec, commit string, err error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stateTimeout)
	defer cancel()
	var notes []string
	if g.Contains(ctx, m.Repo, m.Base, commit) {
		notes = append(notes, m.Base+" does contain the thread's commit (the merge landed)")
	}
	if paths, perr := g.git(ctx, m.Repo, "rev-parse", "--git-path", "MERGE_HEAD", "--git-path", "index.lock"); perr == nil {
		for i, p := range strings.Split(paths, "\n") {
			if !filepath.IsAbs(p) {
				p = filepath.Join(m.Repo, p)
			}
			if _, serr := os.Lstat(p); serr != nil {
				continue
			}
			if i == 0 {
				notes = append(notes, "a merge is in progress in the checkout (finish it, or run git merge --abort)")
			} else {
				notes = append(notes, "git's lock "+p+" is left (remove it once no git runs there)")
			}
		}
	}
	if len(notes) == 0 {
		return err
	}
	return fmt.Errorf("%w; after it, %s", err, strings.Join(notes, "; "))
}

// CurrentBranch returns the branch checked out at dir ("" when detached).
func (g *Git) CurrentBranch(ctx context.Context, dir string) string {
	out, err := g.git(ctx, dir, "symbolic-ref", "--quiet", "HEAD")
	if err != nil {
		return ""
	}
	b, ok := strings.CutPrefix(out, "refs/heads/")
	if !ok {
		return ""
	}
	return b
}

// Contains reports whether commit is an ancestor of (or equal to) the
// branch (refs/heads/<branch>: never a tag of the same name).
func (g *Git) Contains(ctx context.Context, repo, branch, commit string) bool {
	_, err := g.git(ctx, repo, "merge-base", "--is-ancestor", commit, "refs/heads/"+branch)
	return err == nil
}

func short(commit string) string {
	if len(commit) > 10 {
		return commit[:10]
	}
	return commit
}
