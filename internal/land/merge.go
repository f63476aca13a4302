package land

import (
	"context"
	"errors"
	"fmt"

	"github.com/ccbridge/ccbridge/internal/audit"
	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/worktree"
)

// Merge merges the thread's branch into the branch the project checkout
// is on. shown is the commit a person was shown (/diff's "Merge this"):
// the merge lands exactly it, or nothing once the branch moved; empty
// (/merge) lands the branch's head.
func (l Lander) Merge(ctx context.Context, key string, t Target, u chat.User, shown string) chat.Reply {
	if !t.Tree {
		return chat.Reply{Content: "/merge works in a thread with its own worktree: it merges the thread's branch into the branch it started from."}
	}
	base := l.Git.CurrentBranch(ctx, t.Repo)
	switch {
	case base == "":
		return chat.Reply{Content: "⚠️ Nothing was merged: the project checkout is not on a branch (detached HEAD)."}
	case !l.Git.Contains(ctx, t.Repo, base, t.Base):
		return chat.Reply{Content: fmt.Sprintf("⚠️ Nothing was merged: the project checkout is on `%s`, which is not the branch this thread started from (it lacks the thread's base commit `%s`). Check out that branch first.", base, Short(t.Base))}
	}
	note := ""
	if d, err := l.Git.Diff(ctx, t.Dir, "HEAD"); err == nil && !d.Empty() {
		note = fmt.Sprintf("\nℹ️ %d uncommitted file(s) in the thread's worktree were not part of the merge; /commit them first to land them.", d.Files)
	}
	res, err := l.Git.Merge(ctx, worktree.MergeSpec{Repo: t.Repo, Tree: t.Dir, Branch: t.Branch, Base: base, Commit: shown,
		Message: fmt.Sprintf("Merge %s into %s\n\nMerged from %s by %s (%s) through ccbridge.", t.Branch, base, audit.Title(t.From), u.Name, u.ID)})
	var nr *worktree.NotReadyError
	switch {
	case errors.As(err, &nr):
		return chat.Reply{Content: "⚠️ Nothing was merged: " + chat.Clip(nr.Reason, 1500) + "."}
	case err != nil:
		return chat.Reply{Content: "⚠️ Could not merge: " + chat.ErrText(err)}
	case len(res.Conflicts) > 0:
		l.record(key, t, "merge", "merge "+t.Branch+" into "+base, "conflict, aborted", u)
		return chat.Reply{Content: fmt.Sprintf("⚠️ Merging `%s` into `%s` conflicts in: %s. The merge was aborted: both branches and the checkout are as they were (asked by %s).",
			t.Branch, base, ListFiles(res.Conflicts, maxListed), chat.Mention(u))}
	}
	how := "with a merge commit"
	if res.FastForward {
		how = "fast-forward"
	}
	l.record(key, t, "merge", "merge "+t.Branch+" into "+base, how+" "+Short(res.Commit), u)
	reply := chat.Reply{Content: fmt.Sprintf("🔀 Merged `%s` into `%s` (%s, now at `%s`) by %s.%s", t.Branch, base, how, Short(res.Commit), chat.Mention(u), note)}
	if note == "" {
		reply.Content += "\nThe thread's work is on `" + base + "` now: remove its worktree and branch, and archive the thread?"
		reply.Rows = l.removeRows(key)
	}
	reply.Content += "\n" + noHooks
	return reply
}

// removeRows offer to remove a merged thread's worktree.
func (l Lander) removeRows(key string) []chat.Row {
	return []chat.Row{{Buttons: []chat.Button{
		{Label: "Remove the worktree and archive", CustomID: l.ID(key, "remove"), Style: chat.Primary},
		{Label: "Keep it", CustomID: l.ID(key, "keep"), Style: chat.Secondary},
	}}}
}

// RemoveMerged removes a thread's worktree and branch after /merge, only
// while that loses nothing: no uncommitted change, no file git ignores (a
// .env, local data: the diff leaves them out, and the forced removal
// deletes them), and the branch wholly contained in the branch the
// checkout is on. removed says the front end may archive the thread now.
func (l Lander) RemoveMerged(ctx context.Context, key string, t Target, u chat.User) (reply chat.Reply, removed bool) {
	if !t.Tree {
		return chat.Reply{Content: "This thread has no worktree any more."}, false
	}
	base := l.Git.CurrentBranch(ctx, t.Repo)
	d, err := l.Git.Diff(ctx, t.Dir, "HEAD")
	switch {
	case err != nil:
		return chat.Reply{Content: "⚠️ " + chat.ErrText(err)}, false
	case !d.Empty():
		return chat.Reply{Content: fmt.Sprintf("⚠️ Kept the worktree: it has %d uncommitted file(s) now.", d.Files)}, false
	case base == "" || !l.Git.Contains(ctx, t.Repo, base, "refs/heads/"+t.Branch):
		return chat.Reply{Content: "⚠️ Kept the worktree: its branch has commits that are not on the checkout's branch any more."}, false
	}
	c, err := l.Git.Inspect(ctx, t.Dir, t.Base)
	switch {
	case err != nil:
		return chat.Reply{Content: "⚠️ Kept the worktree: " + chat.ErrText(err)}, false
	case len(c.Ignored) > 0:
		return chat.Reply{Content: fmt.Sprintf("⚠️ Kept the worktree `%s`: it holds %d file(s) git ignores, which removing it would delete: %s. Move them out, then press Remove again (or remove it yourself with `git worktree remove --force`).",
			t.Dir, len(c.Ignored), ListFiles(c.Ignored, maxListed)), Rows: l.removeRows(key)}, false
	}
	// Claude must not be left running in a removed directory: its
	// session ends first (a new message starts a fresh worktree).
	if err := l.Sessions.Stop(ctx, key); err != nil {
		return chat.Reply{Content: "⚠️ Could not stop the thread's session: " + chat.ErrText(err)}, false
	}
	// Checked above that nothing is lost; the safe rule of
	// ReleaseWorktree counts commits beyond the thread's base, which a
	// merged branch has.
	rel, err := l.Sessions.ReleaseWorktree(ctx, key, true)
	switch {
	case err != nil:
		return chat.Reply{Content: "⚠️ Could not remove the worktree: " + chat.ErrText(err)}, false
	case rel.Removed:
		l.record(key, t, "remove", "remove merged worktree "+rel.Path, "removed", u)
		return chat.Reply{Content: fmt.Sprintf("🗑️ Removed the merged worktree `%s` and its branch `%s`, and archived the thread (by %s).", rel.Path, rel.Branch, chat.Mention(u))}, true
	}
	return chat.Reply{Content: "This thread has no worktree any more."}, false
}
