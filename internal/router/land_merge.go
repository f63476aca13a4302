package router

import (
	"context"
	"errors"
	"fmt"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/worktree"
)

// merge merges the thread's branch into the branch the project checkout
// is on. shown is the commit a person was shown (/diff's "Merge this"):
// the merge lands exactly it, or nothing once the branch moved; empty
// (/merge) lands the branch's head.
func (r *Router) merge(ctx context.Context, key string, lt landTarget, u chat.User, shown string) chat.Reply {
	if !lt.tree {
		return chat.Reply{Content: "/merge works in a thread with its own worktree: it merges the thread's branch into the branch it started from."}
	}
	base := r.opt.Land.CurrentBranch(ctx, lt.repo)
	switch {
	case base == "":
		return chat.Reply{Content: "⚠️ Nothing was merged: the project checkout is not on a branch (detached HEAD)."}
	case !r.opt.Land.Contains(ctx, lt.repo, base, lt.base):
		return chat.Reply{Content: fmt.Sprintf("⚠️ Nothing was merged: the project checkout is on `%s`, which is not the branch this thread started from (it lacks the thread's base commit `%s`). Check out that branch first.", base, short(lt.base))}
	}
	note := ""
	if d, err := r.opt.Land.Diff(ctx, lt.dir, "HEAD"); err == nil && !d.Empty() {
		note = fmt.Sprintf("\nℹ️ %d uncommitted file(s) in the thread's worktree were not part of the merge; /commit them first to land them.", d.Files)
	}
	res, err := r.opt.Land.Merge(ctx, worktree.MergeSpec{Repo: lt.repo, Tree: lt.dir, Branch: lt.branch, Base: base, Commit: shown,
		Message: fmt.Sprintf("Merge %s into %s\n\nMerged from Discord by %s (%s) through ccbridge.", lt.branch, base, u.Name, u.ID)})
	var nr *worktree.NotReadyError
	switch {
	case errors.As(err, &nr):
		return chat.Reply{Content: "⚠️ Nothing was merged: " + clip(nr.Reason, 1500) + "."}
	case err != nil:
		return chat.Reply{Content: "⚠️ Could not merge: " + errText(err)}
	case len(res.Conflicts) > 0:
		r.audit(key, lt, "merge", "merge "+lt.branch+" into "+base, "conflict, aborted", u)
		return chat.Reply{Content: fmt.Sprintf("⚠️ Merging `%s` into `%s` conflicts in: %s. The merge was aborted: both branches and the checkout are as they were (asked by %s).",
			lt.branch, base, listFiles(res.Conflicts, maxListed), mention(u))}
	}
	how := "with a merge commit"
	if res.FastForward {
		how = "fast-forward"
	}
	r.audit(key, lt, "merge", "merge "+lt.branch+" into "+base, how+" "+short(res.Commit), u)
	reply := chat.Reply{Content: fmt.Sprintf("🔀 Merged `%s` into `%s` (%s, now at `%s`) by %s.%s", lt.branch, base, how, short(res.Commit), mention(u), note)}
	if note == "" {
		reply.Content += "\nThe thread's work is on `" + base + "` now: remove its worktree and branch, and archive the thread?"
		reply.Rows = r.removeRows(key)
	}
	reply.Content += "\n" + noHooks
	return reply
}

// mergeShown answers /diff's "Merge this", whose custom_id holds the
// commit the diff showed, in a message of its own (the diff stays).
func (r *Router) mergeShown(ctx context.Context, key string, lt landTarget, args []string, u chat.User, resp chat.Responder) {
	if len(args) != 1 || args[0] == "" {
		_ = resp.Respond(chat.Reply{Content: "This button is no longer valid; nothing was merged. Run /diff again.", Ephemeral: true})
		return
	}
	if r.busy(key) {
		_ = resp.Respond(chat.Reply{Content: busyText, Ephemeral: true})
		return
	}
	if err := resp.Defer(false); err != nil {
		return
	}
	_, _ = resp.Edit(r.merge(ctx, key, lt, u, args[0]))
}

// removeRows offer to remove a merged thread's worktree.
func (r *Router) removeRows(key string) []chat.Row {
	return []chat.Row{{Buttons: []chat.Button{
		{Label: "Remove the worktree and archive", CustomID: r.landID(key, "remove"), Style: chat.Primary},
		{Label: "Keep it", CustomID: r.landID(key, "keep"), Style: chat.Secondary},
	}}}
}

// removeMerged removes a thread's worktree and branch after /merge, and
// archives the thread, only while that loses nothing: no uncommitted
// change, no file git ignores (a .env, local data: the diff leaves them
// out, and the forced removal deletes them), and the branch wholly
// contained in the branch the checkout is on.
func (r *Router) removeMerged(ctx context.Context, key string, tg target, lt landTarget, u chat.User, resp chat.Responder) {
	if r.busy(key) {
		_ = resp.Respond(chat.Reply{Content: busyText, Ephemeral: true})
		return
	}
	if err := resp.DeferUpdate(); err != nil {
		return
	}
	if !lt.tree {
		_, _ = resp.Edit(chat.Reply{Content: "This thread has no worktree any more."})
		return
	}
	base := r.opt.Land.CurrentBranch(ctx, lt.repo)
	d, err := r.opt.Land.Diff(ctx, lt.dir, "HEAD")
	switch {
	case err != nil:
		_, _ = resp.Edit(chat.Reply{Content: "⚠️ " + errText(err)})
		return
	case !d.Empty():
		_, _ = resp.Edit(chat.Reply{Content: fmt.Sprintf("⚠️ Kept the worktree: it has %d uncommitted file(s) now.", d.Files)})
		return
	case base == "" || !r.opt.Land.Contains(ctx, lt.repo, base, "refs/heads/"+lt.branch):
		_, _ = resp.Edit(chat.Reply{Content: "⚠️ Kept the worktree: its branch has commits that are not on the checkout's branch any more."})
		return
	}
	c, err := r.opt.Land.Inspect(ctx, lt.dir, lt.base)
	switch {
	case err != nil:
		_, _ = resp.Edit(chat.Reply{Content: "⚠️ Kept the worktree: " + errText(err)})
		return
	case len(c.Ignored) > 0:
		_, _ = resp.Edit(chat.Reply{Content: fmt.Sprintf("⚠️ Kept the worktree `%s`: it holds %d file(s) git ignores, which removing it would delete: %s. Move them out, then press Remove again (or remove it yourself with `git worktree remove --force`).",
			lt.dir, len(c.Ignored), listFiles(c.Ignored, maxListed)), Rows: r.removeRows(key)})
		return
	}
	// Claude must not be left running in a removed directory: its
	// session ends first (a new message starts a fresh worktree).
	if err := r.opt.Sessions.Stop(ctx, key); err != nil {
		_, _ = resp.Edit(chat.Reply{Content: "⚠️ Could not stop the thread's session: " + errText(err)})
		return
	}
	// Checked above that nothing is lost; the safe rule of
	// ReleaseWorktree counts commits beyond the thread's base, which a
	// merged branch has.
	rel, err := r.opt.Sessions.ReleaseWorktree(ctx, key, true)
	switch {
	case err != nil:
		_, _ = resp.Edit(chat.Reply{Content: "⚠️ Could not remove the worktree: " + errText(err)})
	case rel.Removed:
		r.audit(key, lt, "remove", "remove merged worktree "+rel.Path, "removed", u)
		_, _ = resp.Edit(chat.Reply{Content: fmt.Sprintf("🗑️ Removed the merged worktree `%s` and its branch `%s`, and archived the thread (by %s).", rel.Path, rel.Branch, mention(u))})
		// Last: nothing can be edited in an archived thread.
		if tg.threadID != "" {
			if err := r.opt.Replier.ArchiveThread(ctx, tg.rt.server.Name, tg.threadID); err != nil {
				r.opt.Log.Warn("could not archive a merged thread", "session", key, "err", err)
			}
		}
	default:
		_, _ = resp.Edit(chat.Reply{Content: "This thread has no worktree any more."})
	}
}
