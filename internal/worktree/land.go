package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/ccbridge/ccbridge/internal/execx"
)

// Diff is a working tree's change against a base commit: the commits since
// it and the uncommitted and untracked files (not ignored ones).
type Diff struct {
	Stat  string // git diff --stat
	Patch string // the whole patch, binary files included
	Files int
	// Head is the commit HEAD was at: with no uncommitted change, what a
	// merge of the branch lands is exactly what this diff shows.
	Head        string
	Uncommitted bool // the working tree differs from Head
	// Marked are the text files that .gitattributes (or config) made
	// binary: the patch shows them as text, and a reader is told.
	Marked []string
	// Binary is a text rendering of the files the patch carries as binary
	// (base85): never shown, but a secret in it holds the patch back.
	Binary string
}

// Empty reports whether there is no change.
func (d Diff) Empty() bool { return strings.TrimSpace(d.Patch) == "" }

// showFlags keep a diff what git computes: no external diff and no
// textconv program rewrites it (either can hide a change).
var showFlags = []string{"--no-color", "--no-ext-diff", "--no-textconv"}

// Diff returns the change of the working tree at dir against base (a
// commit; "HEAD" for uncommitted changes only). Untracked files are
// included through a temporary index, so the real index is left as it was.
func (g *Git) Diff(ctx context.Context, dir, base string) (Diff, error) {
	var d Diff
	g, err := g.reader(ctx, dir)
	if err != nil {
		return d, err
	}
	idx, err := os.CreateTemp("", "ccbridge-index-*")
	if err != nil {
		return d, fmt.Errorf("diff: %w", err)
	}
	idx.Close()
	defer os.Remove(idx.Name())
	ig := &Git{run: g.run, env: append(append([]string(nil), g.env...), "GIT_INDEX_FILE="+idx.Name()), off: g.off}
	if d.Head, err = ig.git(ctx, dir, "rev-parse", "--verify", "HEAD^{commit}"); err != nil {
		return d, err
	}
	if _, err := ig.git(ctx, dir, "read-tree", d.Head); err != nil {
		return d, err
	}
	if _, err := ig.git(ctx, dir, append([]string{"add", "-A", "--"}, notTrees...)...); err != nil {
		return d, err
	}
	if _, err := ig.git(ctx, dir, "diff", "--cached", "--quiet", d.Head); err != nil {
		var ce *execx.CmdError
		if !errors.As(err, &ce) || ce.ExitCode != 1 {
			return d, err
		}
		d.Uncommitted = true
	}
	if d.Stat, err = ig.git(ctx, dir, append(append([]string{"diff", "--cached", "--stat=100"}, showFlags...), base)...); err != nil {
		return d, err
	}
	binary, err := ig.binaryFiles(ctx, dir, base)
	if err != nil {
		return d, err
	}
	if d.Patch, d.Marked, d.Binary, err = ig.patch(ctx, dir, base, binary); err != nil {
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

// binaryFiles lists the files (from the top of the repository) a diff
// against base shows as binary.
func (g *Git) binaryFiles(ctx context.Context, dir, base string) ([]string, error) {
	out, err := g.git(ctx, dir, append(append([]string{"diff", "--cached", "--numstat", "-z", "--no-renames"}, showFlags...), base)...)
	if err != nil {
		return nil, err
	}
	var files []string
	for rec := range strings.SplitSeq(out, "\x00") {
		if f, ok := strings.CutPrefix(rec, "-\t-\t"); ok {
			files = append(files, f)
		}
	}
	return files, nil
}

// patch renders the diff against base. Of the files git carries as
// binary, those without a NUL byte (binary only because an attribute or
// config says so: "*.sh binary" hides a script from review) are shown as
// text; the others stay base85, and their text rendering is returned for
// the redactor.
func (g *Git) patch(ctx context.Context, dir, base string, binary []string) (patch string, marked []string, hidden string, err error) {
	args := append(append([]string{"diff", "--cached", "--binary"}, showFlags...), base)
	if len(binary) == 0 {
		patch, err = g.git(ctx, dir, args...)
		return patch, nil, "", err
	}
	text, err := g.git(ctx, dir, append(append(append([]string{"diff", "--cached", "--text", "--no-renames"}, showFlags...), base, "--"), literal("", binary)...)...)
	if err != nil {
		return "", nil, "", err
	}
	sections := splitDiff(text)
	if len(sections) != len(binary) {
		// Not one section per file: show nothing as text, check it all.
		patch, err = g.git(ctx, dir, args...)
		return patch, nil, text, err
	}
	var shown, carried []string
	for i, s := range sections {
		if strings.IndexByte(s, 0) >= 0 {
			carried = append(carried, s)
			continue
		}
		marked = append(marked, binary[i])
		shown = append(shown, s)
	}
	if len(marked) > 0 {
		args = append(append(args, "--", ":/"), literal("exclude,", marked)...)
	}
	if patch, err = g.git(ctx, dir, args...); err != nil {
		return "", nil, "", err
	}
	if len(shown) > 0 {
		patch = strings.TrimRight(patch+"\n"+strings.Join(shown, ""), "\n")
	}
	return patch, marked, strings.Join(carried, ""), nil
}

// literal turns file names from the top of the repository into pathspecs
// (with more magic words before them).
func literal(magic string, files []string) []string {
	specs := make([]string, len(files))
	for i, f := range files {
		specs[i] = ":(top," + magic + "literal)" + f
	}
	return specs
}

// splitDiff cuts a patch into its files' sections.
func splitDiff(patch string) []string {
	var out []string
	rest := patch
	for rest != "" {
		next := strings.Index(rest[1:], "\ndiff --git ")
		if next < 0 {
			out = append(out, rest)
			break
		}
		out = append(out, rest[:next+2])
		rest = rest[next+2:]
	}
	if len(out) > 0 && !strings.HasPrefix(out[0], "diff --git ") {
		return nil
	}
	for i := range out {
		if !strings.HasSuffix(out[i], "\n") {
			out[i] += "\n"
		}
	}
	return out
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
// files too; ignored ones not) and returns the new commit. dir may be a
// subdirectory: what it commits is that subdirectory's changes, so it
// refuses (a *NotReadyError) while the index holds changes staged outside
// it, which a commit would take along unseen.
func (g *Git) CommitAll(ctx context.Context, dir, message string) (string, error) {
	if err := g.writable(ctx, dir); err != nil {
		return "", err
	}
	status, err := g.git(ctx, dir, append([]string{"status", "--porcelain", "--"}, notTrees...)...)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(status) == "" {
		return "", ErrNothingToCommit
	}
	if outside, err := g.stagedOutside(ctx, dir); err != nil {
		return "", err
	} else if len(outside) > 0 {
		return "", &NotReadyError{Reason: fmt.Sprintf("changes outside %s are staged (%s), and a commit would take them along; unstage or commit them yourself first", dir, strings.Join(outside, ", "))}
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

// stagedOutside lists the staged files outside notTrees of dir.
func (g *Git) stagedOutside(ctx context.Context, dir string) ([]string, error) {
	prefix, err := g.git(ctx, dir, "rev-parse", "--show-prefix")
	if err != nil {
		return nil, err
	}
	staged, err := g.git(ctx, dir, "diff", "--cached", "--name-only", "-z", "--no-renames")
	if err != nil {
		return nil, err
	}
	var out []string
	for f := range strings.SplitSeq(staged, "\x00") {
		if f != "" && (!strings.HasPrefix(f, prefix) || strings.HasPrefix(f, prefix+".claude/worktrees/")) {
			out = append(out, f)
		}
	}
	return out, nil
}

// Discard throws away the working tree's uncommitted changes at dir, and
// only there (dir may be a subdirectory, whose changes alone were shown):
// tracked files go back to HEAD and untracked ones are removed (ignored
// files and commits stay).
func (g *Git) Discard(ctx context.Context, dir string) error {
	if err := g.writable(ctx, dir); err != nil {
		return err
	}
	// restore refuses a pathspec that matches no tracked file (a
	// subdirectory of new files only).
	if tracked, err := g.git(ctx, dir, append([]string{"ls-files", "--"}, notTrees...)...); err != nil {
		return err
	} else if tracked != "" {
		if _, err := g.git(ctx, dir, append([]string{"restore", "-q", "--source=HEAD", "--staged", "--worktree", "--"}, notTrees...)...); err != nil {
			return err
		}
	}
	_, err := g.git(ctx, dir, append([]string{"clean", "-q", "-fd", "--"}, notTrees...)...)
	return err
}
