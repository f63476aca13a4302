// Package worktree manages the git worktrees that isolate thread sessions:
// one worktree on its own branch per thread, created from a recorded base
// commit, and removed only when that loses nothing (unless a person
// confirmed). It runs git through the execx seam and imports only execx.
package worktree

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ccbridge/ccbridge/internal/execx"
)

// Errors for the cases people hit, each with what to do.
var (
	ErrNotRepo   = errors.New("not a git repository: worktree isolation needs one (git init, or set isolation = \"none\")")
	ErrNoCommits = errors.New("the repository has no commits yet: make one first, then worktrees can branch from it")
	ErrDirty     = errors.New("the worktree has uncommitted changes")
	ErrAhead     = errors.New("the worktree's branch has commits beyond its base")
	// ErrIgnored is an ErrDirty: whoever keeps dirty worktrees keeps these.
	ErrIgnored = fmt.Errorf("the worktree holds files git ignores (such as .env): %w", ErrDirty)
)

// BranchInUseError says the branch is checked out in another worktree.
type BranchInUseError struct {
	Branch, Path string
}

func (e *BranchInUseError) Error() string {
	return fmt.Sprintf("branch %s is already checked out at %s", e.Branch, e.Path)
}

// Git runs git commands.
type Git struct {
	run execx.Runner
	env []string
	off []string // -c overrides switching off the repository's filter drivers (read-only calls)
}

// New returns a Git over run.
func New(run execx.Runner) *Git {
	// GIT_OPTIONAL_LOCKS=0: a status for ccbridge's own look never takes
	// index.lock from under Claude's or the person's git.
	return &Git{run: run, env: execx.ChildEnv(os.Environ(), []string{"PATH", "HOME", "USER", "LANG", "TMPDIR", "GIT_*", "XDG_CONFIG_HOME"},
		"GIT_TERMINAL_PROMPT=0", "LC_ALL=C", "GIT_OPTIONAL_LOCKS=0")}
}

// safeConfig are the options of every git call: the programs a repository's
// config can name (fsmonitor, hooks, an external diff, signing) never run
// under ccbridge, which runs outside Claude's permissions and sandbox.
var safeConfig = []string{"-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "diff.external=", "-c", "commit.gpgSign=false"}

func (g *Git) git(ctx context.Context, dir string, args ...string) (string, error) {
	return g.gitIn(ctx, dir, nil, args...)
}

// gitIn runs git with stdin.
func (g *Git) gitIn(ctx context.Context, dir string, stdin io.Reader, args ...string) (string, error) {
	argv := append(append(append([]string{"git", "-C", dir}, safeConfig...), g.off...), args...)
	out, err := g.run.Run(ctx, execx.Cmd{Args: argv, Env: g.env, Stdin: stdin})
	if err != nil {
		return "", fmt.Errorf("git %s: %w", args[0], err)
	}
	return strings.TrimRight(string(out), "\n"), nil
}

// Root returns the top directory of the repository holding dir.
func (g *Git) Root(ctx context.Context, dir string) (string, error) {
	out, err := g.git(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", ErrNotRepo
	}
	return out, nil
}

// Head returns the commit HEAD points at.
func (g *Git) Head(ctx context.Context, repo string) (string, error) {
	out, err := g.git(ctx, repo, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return "", ErrNoCommits
	}
	return out, nil
}

// Tree is one line of `git worktree list`.
type Tree struct {
	Path     string
	Head     string
	Branch   string // without refs/heads/
	Detached bool
	Prunable bool
}

// List returns the repository's worktrees, the main one first.
func (g *Git) List(ctx context.Context, repo string) ([]Tree, error) {
	out, err := g.git(ctx, repo, "worktree", "list", "--porcelain")
	if err != nil {
		return nil, err
	}
	return parsePorcelain(out), nil
}

func parsePorcelain(out string) []Tree {
	var trees []Tree
	for block := range strings.SplitSeq(strings.TrimSpace(out), "\n\n") {
		var t Tree
		for line := range strings.SplitSeq(block, "\n") {
			k, v, _ := strings.Cut(line, " ")
			switch k {
			case "worktree":
				t.Path = v
			case "HEAD":
				t.Head = v
			case "branch":
				t.Branch = strings.TrimPrefix(v, "refs/heads/")
			case "detached":
				t.Detached = true
			case "prunable":
				t.Prunable = true
			}
		}
		if t.Path != "" {
			trees = append(trees, t)
		}
	}
	return trees
}

var unsafe = regexp.MustCompile(`[^a-z0-9]+`)

// Names returns the branch and directory name of a thread's worktree:
// ccbridge/<slug>-<id> and <slug>-<id>, deterministic for a thread.
func Names(threadName, threadID string) (branch, dir string) {
	slug := strings.Trim(unsafe.ReplaceAllString(strings.ToLower(threadName), "-"), "-")
	if len(slug) > 32 {
		slug = strings.Trim(slug[:32], "-")
	}
	if slug == "" {
		slug = "thread"
	}
	short := threadID
	if len(short) > 6 {
		short = short[len(short)-6:]
	}
	dir = slug + "-" + short
	return "ccbridge/" + dir, dir
}

// Dir is where a repository's thread worktrees live: under .claude/worktrees,
// like Claude Code's own, so a trusted project trusts them too.
func Dir(repo, name string) string { return filepath.Join(repo, ".claude", "worktrees", name) }

// Add creates (or reuses) the worktree at path on branch, branching from
// base when the branch does not exist yet.
func (g *Git) Add(ctx context.Context, repo, path, branch, base string) error {
	if out, err := g.git(ctx, repo, "check-ref-format", "--branch", branch); err != nil || out == "" {
		return fmt.Errorf("branch name %q is not valid", branch)
	}
	trees, err := g.List(ctx, repo)
	if err != nil {
		return err
	}
	for _, t := range trees {
		if t.Branch == branch {
			if filepath.Clean(t.Path) == filepath.Clean(path) {
				return nil // already there
			}
			return &BranchInUseError{Branch: branch, Path: t.Path}
		}
	}
	if _, err := g.git(ctx, repo, "show-ref", "--verify", "--quiet", "refs/heads/"+branch); err == nil {
		_, err = g.git(ctx, repo, "worktree", "add", path, branch)
		return err
	}
	_, err = g.git(ctx, repo, "worktree", "add", "-b", branch, path, base)
	return err
}

// Changes describes what a worktree holds beyond its base.
type Changes struct {
	Dirty    bool     // uncommitted or untracked files
	Ignored  []string // files git ignores (.env, local data): a clean status hides them
	Ahead    int      // commits beyond the base
	DiffStat string   // git diff --stat against the base, plus untracked and ignored files
	// Fingerprint changes whenever HEAD, the status (ignored files
	// included) or the uncommitted diff changes: a person's confirmation
	// to delete is bound to the one they saw.
	Fingerprint string
}

// Lost reports whether removing the worktree would lose work.
func (c Changes) Lost() bool { return c.Dirty || c.Ahead > 0 || len(c.Ignored) > 0 }

// Inspect reports a worktree's changes against its base commit.
func (g *Git) Inspect(ctx context.Context, path, base string) (Changes, error) {
	var c Changes
	g, err := g.reader(ctx, path)
	if err != nil {
		return c, err
	}
	status, err := g.git(ctx, path, "status", "--porcelain", "--ignored")
	if err != nil {
		return c, err
	}
	var untracked []string
	for line := range strings.SplitSeq(status, "\n") {
		switch {
		case strings.HasPrefix(line, "!! "):
			c.Ignored = append(c.Ignored, line[3:])
		case strings.TrimSpace(line) != "":
			c.Dirty = true
			if f, ok := strings.CutPrefix(line, "?? "); ok {
				untracked = append(untracked, f)
			}
		}
	}
	count, err := g.git(ctx, path, "rev-list", "--count", base+"..HEAD")
	if err != nil {
		return c, err
	}
	c.Ahead, _ = strconv.Atoi(strings.TrimSpace(count))
	stat, err := g.git(ctx, path, "diff", "--stat", "--no-ext-diff", "--no-textconv", base)
	if err != nil {
		return c, err
	}
	if len(untracked) > 0 {
		stat = strings.TrimSpace(stat + "\n untracked: " + strings.Join(untracked, ", "))
	}
	if len(c.Ignored) > 0 {
		stat = strings.TrimSpace(stat + "\n ignored by git: " + strings.Join(c.Ignored, ", "))
	}
	c.DiffStat = stat
	head, err := g.git(ctx, path, "rev-parse", "--verify", "HEAD")
	if err != nil {
		return c, err
	}
	diff, err := g.git(ctx, path, "diff", "--no-color", "--no-ext-diff", "--no-textconv", "HEAD")
	if err != nil {
		return c, err
	}
	sum := sha256.Sum256([]byte(head + "\x00" + status + "\x00" + diff))
	c.Fingerprint = hex.EncodeToString(sum[:8])
	return c, nil
}

// Summary is what a panel shows of a worktree.
type Summary struct {
	Dirty bool // uncommitted changes to tracked files
	Ahead int  // commits beyond the base
}

// Summary computes only what a panel shows, as cheaply as git can: no
// untracked or ignored scan, no diff.
func (g *Git) Summary(ctx context.Context, path, base string) (Summary, error) {
	var s Summary
	g, err := g.reader(ctx, path)
	if err != nil {
		return s, err
	}
	status, err := g.git(ctx, path, "status", "--porcelain", "--untracked-files=no")
	if err != nil {
		return s, err
	}
	s.Dirty = strings.TrimSpace(status) != ""
	count, err := g.git(ctx, path, "rev-list", "--count", base+"..HEAD")
	if err != nil {
		return s, err
	}
	s.Ahead, _ = strconv.Atoi(strings.TrimSpace(count))
	return s, nil
}

// Remove deletes the worktree and its branch. Without force it refuses
// (ErrDirty, ErrAhead) when that would lose work, and deletes the branch
// with `branch -d`; force, for a person's confirmed request, removes the
// worktree with --force and the branch with -D. Stale entries are pruned.
func (g *Git) Remove(ctx context.Context, repo, path, branch, base string, force bool) error {
	if !force {
		c, err := g.Inspect(ctx, path, base)
		if err != nil {
			return err
		}
		switch {
		case c.Dirty:
			return ErrDirty
		case len(c.Ignored) > 0:
			// A non-forced `worktree remove` deletes ignored files too.
			return ErrIgnored
		case c.Ahead > 0:
			return ErrAhead
		}
	}
	args := []string{"worktree", "remove", path}
	if force {
		args = []string{"worktree", "remove", "--force", path}
	}
	if _, err := g.git(ctx, repo, args...); err != nil {
		return err
	}
	del := "-d"
	if force {
		del = "-D"
	}
	var errs []error
	if _, err := g.git(ctx, repo, "branch", del, branch); err != nil {
		errs = append(errs, err)
	}
	if _, err := g.git(ctx, repo, "worktree", "prune"); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Orphans lists the ccbridge worktrees of a repository that no thread
// knows: candidates for a person to look at, never deleted automatically.
func (g *Git) Orphans(ctx context.Context, repo string, known map[string]bool) ([]Tree, error) {
	trees, err := g.List(ctx, repo)
	if err != nil {
		return nil, err
	}
	var out []Tree
	for _, t := range trees {
		if strings.HasPrefix(t.Branch, "ccbridge/") && !known[filepath.Clean(t.Path)] {
			out = append(out, t)
		}
	}
	return out, nil
}

// repoDrivers lists the filter and merge drivers that the repository's own
// config (local or worktree scope) names: programs a model that can write
// .git/config chose. Those of the person's global or system config are
// theirs, and run (git-lfs).
func (g *Git) repoDrivers(ctx context.Context, dir string) (filters, merges []string, err error) {
	out, err := g.git(ctx, dir, "config", "-z", "--show-scope", "--get-regexp", `^(filter|merge)\..*\.(clean|smudge|process|driver)$`)
	if err != nil {
		var ce *execx.CmdError
		if errors.As(err, &ce) && ce.ExitCode == 1 {
			return nil, nil, nil // none configured
		}
		return nil, nil, err
	}
	// -z: scope NUL key LF value NUL, for each.
	fields := strings.Split(out, "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		scope := fields[i]
		key, _, _ := strings.Cut(fields[i+1], "\n")
		if scope != "local" && scope != "worktree" {
			continue
		}
		section, name, _ := strings.Cut(key, ".")
		name = name[:max(0, strings.LastIndexByte(name, '.'))]
		switch {
		case section == "filter" && !slices.Contains(filters, name):
			filters = append(filters, name)
		case section == "merge" && !slices.Contains(merges, name):
			merges = append(merges, name)
		}
	}
	return filters, merges, nil
}

// reader returns a Git for read-only calls in dir: the repository's own
// filter drivers are switched off (what they would compute is only shown,
// never written).
func (g *Git) reader(ctx context.Context, dir string) (*Git, error) {
	filters, _, err := g.repoDrivers(ctx, dir)
	if err != nil {
		return nil, err
	}
	r := *g
	r.off = slices.Clone(g.off)
	for _, f := range filters {
		for _, k := range []string{"clean=", "smudge=", "process=", "required=false"} {
			r.off = append(r.off, "-c", "filter."+f+"."+k)
		}
	}
	return &r, nil
}

// writable refuses (a *NotReadyError) a write in dir while the
// repository's own config names filter or merge drivers: switched off,
// they would write unfiltered content (a git-crypt secret in plain text),
// and ccbridge does not run the repository's programs.
func (g *Git) writable(ctx context.Context, dir string) error {
	filters, merges, err := g.repoDrivers(ctx, dir)
	if err != nil {
		return err
	}
	if len(filters)+len(merges) == 0 {
		return nil
	}
	var names []string
	for _, f := range filters {
		names = append(names, "filter "+f)
	}
	for _, m := range merges {
		names = append(names, "merge driver "+m)
	}
	return &NotReadyError{Reason: fmt.Sprintf("the repository's own git config names programs (%s), which ccbridge does not run; do this in a terminal", strings.Join(names, ", "))}
}
