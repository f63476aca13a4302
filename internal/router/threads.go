package router

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/land"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
)

// remember records a setting changed from Discord in the durable registry
// (never in the user's config), so it outlives restarts and reboots.
func (r *Router) remember(key string, change func(*state.Registered)) {
	if _, err := r.opt.Registry.Sessions.Update(r.ctx, key, func(g *state.Registered) error {
		change(g)
		g.Updated = time.Now().UTC()
		return nil
	}); err != nil {
		r.opt.Log.Error("could not remember a setting", "session", key, "err", err)
	}
}

// maxThreadName is Discord's limit on a thread name.
const maxThreadName = chat.MaxThreadName

// newThread answers /thread: a public thread in the project channel, with
// its own session started by the prompt, when one is given.
func (r *Router) newThread(ev chat.CommandEvent, tg target) chat.Reply {
	if tg.threadID != "" {
		return chat.Reply{Content: "Use /thread in the project channel, not inside a thread."}
	}
	name := strings.TrimSpace(ev.Options["name"])
	if name == "" {
		return chat.Reply{Content: "⚠️ Give the thread a name."}
	}
	if n := utf8.RuneCountInString(name); n > maxThreadName {
		return chat.Reply{Content: fmt.Sprintf("⚠️ A thread name has at most %d characters; this one has %d.", maxThreadName, n)}
	}
	threadID, err := r.opt.Replier.StartThread(r.ctx, ev.Server, ev.ChannelID, name)
	if err != nil {
		return chat.Reply{Content: "⚠️ Could not start the thread: " + chat.ErrText(err)}
	}
	th := target{key: session.ThreadKey(tg.rt.server.Name, tg.rt.project.Name, threadID), rt: tg.rt, threadID: threadID}
	r.remember(th.key, func(g *state.Registered) {
		g.Server, g.Project, g.ThreadID, g.ThreadName = tg.rt.server.Name, tg.rt.project.Name, threadID, name
	})
	if prompt := strings.TrimSpace(ev.Options["prompt"]); prompt != "" {
		r.enqueue(th, item{ev: chat.MessageEvent{Server: ev.Server, ChannelID: threadID, ParentID: ev.ChannelID, Author: ev.User, Content: prompt}})
	}
	return chat.Reply{Content: "🧵 Started <#" + threadID + ">: its messages go to a " + r.agentOf(tg) + " session of their own."}
}

// idleCheck is how often a thread archived mid-turn is checked for its
// turn's end, besides every change of the session records.
const idleCheck = 2 * time.Second

// HandleThreadArchived stops the session of an archived thread (a message
// in it later resumes the conversation) once its turn is over: Discord
// archives quiet threads by itself, and anyone with Manage Threads may
// archive one, neither of which may cut Claude off mid-turn.
func (r *Router) HandleThreadArchived(server, threadID, parentID string) {
	tg, ok := r.resolve(server, threadID, parentID)
	if !ok || tg.threadID == "" || !r.known(tg.key) {
		return
	}
	r.remember(tg.key, func(g *state.Registered) { g.Archived = true })
	r.closeThread(tg, false)
}

// known reports whether a thread ever had a session (its registry entry is
// made before the session starts).
func (r *Router) known(key string) bool {
	_, err := r.opt.Registry.Sessions.Get(key)
	return err == nil
}

// HandleThreadDeleted stops a deleted thread's session once its turn is
// over, as on archive (deleting takes the same Manage Threads right, and a
// turn cut off may leave half-written files), but waits at most
// deletedTurnCap: nobody can read the thread any more. Its worktree is
// treated as on archive.
func (r *Router) HandleThreadDeleted(server, threadID, parentID string) {
	tg, ok := r.resolve(server, threadID, parentID)
	if !ok || tg.threadID == "" {
		return
	}
	r.dropThreadSchedules(tg, true) // schedule.go
	if !r.known(tg.key) {
		return
	}
	r.remember(tg.key, func(g *state.Registered) { g.Archived = true })
	r.forgetOpened(tg) // open.go
	r.closeThread(tg, true)
}

// deletedTurnCap is how long a deleted thread's turn may go on before its
// session is stopped anyway.
const deletedTurnCap = 10 * time.Minute

// closeThread stops a thread's session in the background, when its turn
// is over (a deleted thread's after deletedTurnCap at most), unless the
// thread comes back to life first; one closing per thread at a time
// (r.closing: whether the thread was deleted).
func (r *Router) closeThread(tg target, deleted bool) {
	r.mu.Lock()
	if _, ok := r.closing[tg.key]; ok {
		if deleted {
			r.closing[tg.key] = true // the waiting closer caps its wait
		}
		r.mu.Unlock()
		return
	}
	r.closing[tg.key] = deleted
	r.mu.Unlock()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer func() {
			r.mu.Lock()
			delete(r.closing, tg.key)
			r.mu.Unlock()
		}()
		ok, midTurn := r.waitTurnEnd(tg)
		if !ok {
			return
		}
		r.mu.Lock()
		deleted = r.closing[tg.key]
		r.mu.Unlock()
		r.stopThread(tg, deleted)
		if midTurn && !deleted {
			r.wg.Add(1)
			go func() { defer r.wg.Done(); r.archiveAgain(tg, time.Now()) }()
		}
	}()
}

// waitTurnEnd waits until the thread's session is not in a turn, or, once
// the thread is deleted, for deletedTurnCap at most. It is false when the
// wait should end without a stop: the daemon is stopping, or a new message
// un-archived the thread. midTurn says whether it waited: a turn ended
// after the archive, and its reply un-archives the thread.
func (r *Router) waitTurnEnd(tg target) (ok, midTurn bool) {
	ctx := r.ctx
	events, err := r.opt.Store.Sessions.Watch(ctx)
	if err != nil {
		events = nil // the ticker alone
	}
	tick := time.NewTicker(idleCheck)
	defer tick.Stop()
	told := false
	capped := r.deletedCap
	if capped <= 0 {
		capped = deletedTurnCap
	}
	var deletedAt time.Time
	for {
		r.mu.Lock()
		deleted := r.closing[tg.key]
		r.mu.Unlock()
		if deleted && deletedAt.IsZero() {
			deletedAt = time.Now()
		}
		if deleted && time.Since(deletedAt) >= capped {
			r.opt.Log.Warn("a deleted thread's turn did not end in time; stopping its session", "session", tg.key, "waited", capped)
			return true, told
		}
		if reg, err := r.opt.Registry.Sessions.Get(tg.key); err == nil && !reg.Archived {
			r.opt.Log.Info("archived thread is in use again; its session stays", "session", tg.key)
			return false, told
		}
		st, err := r.opt.Sessions.Status(ctx, tg.key)
		if err != nil || (st.State != "busy" && st.State != "waiting on a prompt") {
			return true, told
		}
		if !told {
			r.opt.Log.Info("thread closed mid-turn; its session stops when the turn ends", "session", tg.key, "state", st.State, "deleted", deleted)
			told = true
		}
		var capC <-chan time.Time
		if deleted {
			capC = time.After(time.Until(deletedAt.Add(capped)))
		}
		select {
		case <-ctx.Done():
			return false, told
		case <-events:
		case <-tick.C:
		case <-capC:
		}
	}
}

// A turn that ends after its thread was archived posts into the thread (its
// reply, maybe a ping for a long turn), and Discord un-archives a thread
// that gets a message. The Stop hook posts within hookBudget of the turn's
// end, or queues what it could not post for the daemon's outbox.
const (
	hookBudget = 30 * time.Second // internal/hook's budget for one run
	replyWait  = 45 * time.Second // for the reply to be out
	replyPoll  = 250 * time.Millisecond
)

// archiveAgain archives a thread whose turn ended (at ended) after it was
// archived: once the turn's reply is out, and once more when the hook has
// surely ended (a late post; archiving an archived thread is refused,
// harmlessly). Not when the thread is in use again.
func (r *Router) archiveAgain(tg target, ended time.Time) {
	r.replyOut(tg, ended.Add(replyWait))
	r.archive(tg, false)
	select {
	case <-r.ctx.Done():
		return
	case <-time.After(time.Until(ended.Add(hookBudget + time.Second))):
	}
	r.replyOut(tg, ended.Add(replyWait))
	r.archive(tg, true)
}

// replyOut waits, until deadline, for the reply of the thread's last turn
// to be out: its turn recorded by the Stop hook, no post under way in the
// thread (the channel's lock is free, no place held in its reply order:
// the hook posts the reply before the transcript holds it, then edits the
// earlier blocks in while holding its place) and none queued for it.
func (r *Router) replyOut(tg target, deadline time.Time) {
	ctx, cancel := context.WithDeadline(r.ctx, deadline)
	defer cancel()
	turn := ""
	if s, err := r.opt.Store.Sessions.Get(tg.key); err == nil && s.ClaudeSessionID != "" && s.LastPromptID != "" {
		turn = state.TurnKey(s.ClaudeSessionID, s.LastPromptID)
	}
	for {
		recorded := true
		if turn != "" {
			_, err := r.opt.Store.Turns.Get(turn)
			recorded = err == nil
		}
		if recorded && !r.posting(ctx, tg.threadID) {
			return
		}
		select {
		case <-ctx.Done():
			r.opt.Log.Info("the reply of an archived thread's last turn is not out yet; archiving it anyway", "session", tg.key)
			return
		case <-time.After(replyPoll):
		}
	}
}

// posting reports whether a post to the channel is under way (its lock or
// a place in its reply order is held) or queued.
func (r *Router) posting(ctx context.Context, channelID string) bool {
	unlock, err := r.opt.Store.Dir.LockChannel(ctx, channelID)
	if err != nil {
		return true
	}
	unlock()
	places, err := state.OpenPlaces(r.opt.Store.Dir)
	if err != nil || places.First(ctx, channelID, "") != "" {
		return true
	}
	queued, _ := r.opt.Store.Outbox.List()
	for _, o := range queued {
		if o.ChannelID == channelID {
			return true
		}
	}
	return false
}

// archive archives a thread again, unless it is in use again. The late
// try mostly finds it archived still, which Discord refuses (50083).
func (r *Router) archive(tg target, late bool) {
	if reg, err := r.opt.Registry.Sessions.Get(tg.key); err != nil || !reg.Archived || r.ctx.Err() != nil {
		return
	}
	if err := r.opt.Replier.ArchiveThread(r.ctx, tg.rt.server.Name, tg.threadID); err != nil {
		level := slog.LevelWarn
		if late {
			level = slog.LevelDebug
		}
		r.opt.Log.Log(r.ctx, level, "could not archive the thread again", "session", tg.key, "err", err)
		return
	}
	r.opt.Log.Info("thread archived again after its last turn's reply", "session", tg.key)
}

// stopThread stops the session and releases its worktree, reporting a
// kept one in the parent channel: a message in an archived thread would
// un-archive it, and a deleted thread cannot take one.
func (r *Router) stopThread(tg target, deleted bool) {
	ctx, cancel := context.WithTimeout(r.ctx, time.Minute)
	defer cancel()
	if err := r.opt.Sessions.Stop(ctx, tg.key); err != nil {
		r.opt.Log.Error("could not stop a closed thread's session", "session", tg.key, "err", err)
		return
	}
	r.opt.Log.Info("thread closed; session stopped", "session", tg.key, "deleted", deleted)
	reg, _ := r.opt.Registry.Sessions.Get(tg.key)
	if reg.WorktreeKept {
		return // a person chose to keep it
	}
	parent := tg.rt.project.ChannelID
	rel, err := r.opt.Sessions.ReleaseWorktree(ctx, tg.key, false)
	switch {
	case err != nil:
		r.send(tg.rt.server.Name, parent, fmt.Sprintf("⚠️ Could not clean up the worktree of %s: %s", land.ThreadRef(tg.threadID, reg.ThreadName, deleted), chat.ErrText(err)))
	case rel.Removed:
		r.remember(tg.key, func(g *state.Registered) { g.KeptNotice = "" })
	case rel.Path != "":
		// Nothing with uncommitted, ignored or unmerged work is removed
		// silently; the notice is posted once for what the worktree holds.
		if reg.KeptNotice != "" && reg.KeptNotice == rel.Changes.Fingerprint {
			return
		}
		m := land.KeptWorktree(land.ThreadRef(tg.threadID, reg.ThreadName, deleted), rel, r.wtIDs(tg.key))
		if _, err := r.opt.Replier.Post(ctx, tg.rt.server.Name, parent, m); err != nil {
			r.opt.Log.Error("could not report a kept worktree", "session", tg.key, "err", err)
			return
		}
		r.remember(tg.key, func(g *state.Registered) { g.KeptNotice = rel.Changes.Fingerprint })
	}
}

// keptRows are a kept worktree's controls for the thread session key.
func (r *Router) keptRows(key, fingerprint string) []chat.Row {
	return land.KeptRows(fingerprint, r.wtIDs(key))
}

// wtIDs makes the ids of key's kept-worktree controls.
func (r *Router) wtIDs(key string) func(args ...string) string {
	return func(args ...string) string { return r.wtID(key, args...) }
}

func (r *Router) wtID(key string, args ...string) string {
	id, err := chat.ID{Instance: r.opt.Instance, Kind: land.WorktreeKind, Args: append([]string{key}, args...)}.Encode()
	if err != nil {
		// Cannot happen for a valid key (long ones are hashed); never
		// put "" into a component, which Discord rejects with the message.
		r.opt.Log.Error("worktree button", "session", key, "err", err)
		return "cb1|" + r.opt.Instance + "|" + land.WorktreeKind + "|invalid|" + strings.Join(args, "")
	}
	return id
}

// worktreeKey finds the thread session a kept-worktree button names; the
// button must be in that thread's project channel (or the thread itself).
func (r *Router) worktreeKey(server, channelID, arg string) (string, bool) {
	regs, err := r.opt.Registry.Sessions.List()
	if err != nil {
		return "", false
	}
	for key, g := range regs {
		if g.Server != server || g.ThreadID == "" || !chat.ArgIs(arg, key) {
			continue
		}
		if rt, ok := r.lookup(server, channelID); (ok && rt.project.Name == g.Project) || channelID == g.ThreadID || r.openedIn(server, g.ThreadID, channelID) { // open.go
			return key, true
		}
	}
	return "", false
}

// worktreeAction answers the buttons of a kept worktree: Delete anyway
// asks to confirm; only the confirmation removes it, forcibly, and only
// while the thread's session is stopped and the worktree is as it was
// when the person was asked (its fingerprint is in the buttons).
func (r *Router) worktreeAction(ev chat.ComponentEvent, args []string, resp chat.Responder) {
	key, ok := r.worktreeKey(ev.Server, ev.ChannelID, args[0])
	if !ok {
		_ = resp.Respond(chat.Reply{Content: "This button is no longer valid.", Ephemeral: true})
		return
	}
	base := land.KeptBase(ev.Content)
	fingerprint := ""
	if len(args) > 2 {
		fingerprint = args[2]
	}
	switch args[1] {
	case land.KeptDelete, land.KeptConfirm:
		if fingerprint == "" {
			_ = resp.Respond(chat.Reply{Content: land.KeptOldControl, Ephemeral: true})
			return
		}
	}
	switch args[1] {
	case land.KeptDelete:
		_, _ = resp.Update(land.ConfirmDelete(base, fingerprint, r.wtIDs(key)))
	case land.KeptCancel:
		_, _ = resp.Update(chat.Message{Content: base, Rows: r.keptRows(key, fingerprint)})
	case land.KeptConfirm:
		if err := resp.DeferUpdate(); err != nil {
			return
		}
		_, _ = resp.Edit(r.deleteConfirmed(key, base, fingerprint))
	case land.KeptKeep:
		r.remember(key, func(g *state.Registered) { g.WorktreeKept = true })
		_, _ = resp.Update(chat.Message{Content: base + land.KeptForGood})
	default:
		_ = resp.Respond(chat.Reply{Content: "This button is no longer valid.", Ephemeral: true})
	}
}

// deleteConfirmed removes a kept worktree a person confirmed deleting,
// unless its session runs again or it changed since they were asked.
func (r *Router) deleteConfirmed(key, base, fingerprint string) chat.Message {
	ctx := r.ctx
	if st, err := r.opt.Sessions.Status(ctx, key); err != nil {
		return chat.Message{Content: base + "\n⚠️ Nothing was deleted: " + chat.ErrText(err)}
	} else if st.State != "stopped" {
		return chat.Message{Content: base + land.KeptRunning}
	}
	// A removal that loses nothing needs no confirmation; otherwise this
	// reports what the worktree holds now.
	rel, err := r.opt.Sessions.ReleaseWorktree(ctx, key, false)
	switch {
	case err != nil:
		return chat.Message{Content: base + "\n⚠️ Could not delete the worktree: " + chat.ErrText(err)}
	case rel.Path == "":
		return chat.Message{Content: base + land.KeptGone}
	case rel.Removed:
		r.remember(key, func(g *state.Registered) { g.KeptNotice, g.WorktreeKept = "", false })
		return land.KeptDeleted(rel, true)
	case rel.Changes.Fingerprint != fingerprint:
		// The stat shown is out of date: the one of now replaces it.
		return land.KeptChanged(base, rel, r.wtIDs(key))
	}
	rel, err = r.opt.Sessions.ReleaseWorktree(ctx, key, true)
	switch {
	case err != nil:
		return chat.Message{Content: base + "\n⚠️ Could not delete the worktree: " + chat.ErrText(err)}
	case rel.Removed:
		r.remember(key, func(g *state.Registered) { g.KeptNotice, g.WorktreeKept = "", false })
		return land.KeptDeleted(rel, false)
	}
	return chat.Message{Content: base + land.KeptGone}
}

// FinishArchivedThreads picks up, after a restart, the closing of threads
// archived while a turn ran: the registry remembers the archive, so a
// session still running in such a thread stops once its turn ends, as it
// would have without the restart.
func (r *Router) FinishArchivedThreads() {
	regs, err := r.opt.Registry.Sessions.List()
	if err != nil {
		r.opt.Log.Warn("could not read the thread registry", "err", err)
	}
	for key, g := range regs {
		if !g.Archived || g.ThreadID == "" {
			continue
		}
		tg, ok := r.projectThread(g.Server, g.Project, g.ThreadID)
		if !ok || tg.key != key {
			continue
		}
		if st, err := r.opt.Sessions.Status(r.ctx, key); err != nil || st.State == "stopped" {
			continue
		}
		r.closeThread(tg, false)
	}
}

// projectThread is the target of a thread of a configured project (or
// of a folder opened with /open).
func (r *Router) projectThread(server, project, threadID string) (target, bool) {
	if project == session.OpenedProject {
		tg, _ := r.openedThread(server, threadID) // open.go
		return tg, tg.key != ""
	}
	for _, rt := range r.routeTable() {
		if rt.server.Name == server && rt.project.Name == project {
			return r.resolve(server, threadID, rt.project.ChannelID)
		}
	}
	return target{}, false
}
