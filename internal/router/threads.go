package router

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ccbridge/ccbridge/internal/chat"
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

// maxThreadName is Discord's limit on a thread name (1–100 characters).
const maxThreadName = 100

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
		return chat.Reply{Content: "⚠️ Could not start the thread: " + err.Error()}
	}
	th := target{key: session.ThreadKey(tg.rt.server.Name, tg.rt.project.Name, threadID), rt: tg.rt, threadID: threadID}
	r.remember(th.key, func(g *state.Registered) {
		g.Server, g.Project, g.ThreadID, g.ThreadName = tg.rt.server.Name, tg.rt.project.Name, threadID, name
	})
	if prompt := strings.TrimSpace(ev.Options["prompt"]); prompt != "" {
		r.enqueue(th, chat.MessageEvent{Server: ev.Server, ChannelID: threadID, ParentID: ev.ChannelID, Author: ev.User, Content: prompt})
	}
	return chat.Reply{Content: "🧵 Started <#" + threadID + ">: its messages go to a Claude session of their own."}
}

// HandleThreadArchived stops the session of an archived thread (a message
// in it later resumes the conversation).
func (r *Router) HandleThreadArchived(server, threadID, parentID string) {
	tg, ok := r.resolve(server, threadID, parentID)
	if !ok || tg.threadID == "" {
		return
	}
	ctx, cancel := context.WithTimeout(r.ctx, time.Minute)
	defer cancel()
	if err := r.opt.Sessions.Stop(ctx, tg.key); err != nil {
		r.opt.Log.Error("could not stop an archived thread's session", "session", tg.key, "err", err)
		return
	}
	r.remember(tg.key, func(g *state.Registered) { g.Archived = true })
	r.opt.Log.Info("thread archived; session stopped", "session", tg.key)
	rel, err := r.opt.Sessions.ReleaseWorktree(ctx, tg.key, false)
	switch {
	case err != nil:
		r.send(server, threadID, "⚠️ Could not clean up this thread's worktree: "+err.Error())
	case rel.Path != "" && !rel.Removed:
		// Nothing with uncommitted or unmerged work is removed silently.
		if _, err := r.opt.Replier.Post(ctx, server, threadID, r.keptWorktree(tg.key, rel)); err != nil {
			r.opt.Log.Error("could not report a kept worktree", "session", tg.key, "err", err)
		}
	}
}

// keptWorktree is the message about a worktree kept on archive.
func (r *Router) keptWorktree(key string, rel session.Release) chat.Message {
	why := "uncommitted changes"
	if rel.Changes.Ahead > 0 && !rel.Changes.Dirty {
		why = fmt.Sprintf("%d commit(s) beyond its base", rel.Changes.Ahead)
	} else if rel.Changes.Ahead > 0 {
		why = fmt.Sprintf("uncommitted changes and %d commit(s) beyond its base", rel.Changes.Ahead)
	}
	stat := rel.Changes.DiffStat
	if stat == "" {
		stat = "(no diff against the base)"
	}
	return chat.Message{
		Content: fmt.Sprintf("📦 This thread's worktree was kept: it has %s.\n`%s` on branch `%s`\n```\n%s\n```", why, rel.Path, rel.Branch, clip(stat, 1500)),
		Rows: []chat.Row{{Buttons: []chat.Button{
			{Label: "Delete anyway…", CustomID: r.wtID(key, "delete"), Style: chat.Danger},
			{Label: "Keep", CustomID: r.wtID(key, "keep"), Style: chat.Secondary},
		}}},
	}
}

func (r *Router) wtID(key, action string) string {
	id, _ := chat.ID{Instance: r.opt.Instance, Kind: "wt", Args: []string{key, action}}.Encode()
	return id
}

func clip(s string, n int) string {
	s = strings.ReplaceAll(s, "```", "ʼʼʼ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// confirmQuestion marks the confirmation step of a kept-worktree message.
const confirmQuestion = "\n**Delete the worktree and its branch, with their changes?** This cannot be undone."

// worktreeAction answers the buttons of a kept worktree: Delete anyway
// asks to confirm; only the confirmation removes it, forcibly.
func (r *Router) worktreeAction(key, action string, msg chat.Message, resp chat.Responder) {
	base := strings.SplitN(msg.Content, confirmQuestion, 2)[0]
	switch action {
	case "delete":
		_ = resp.Update(chat.Message{Content: base + confirmQuestion, Rows: []chat.Row{{Buttons: []chat.Button{
			{Label: "Yes, delete it", CustomID: r.wtID(key, "confirm"), Style: chat.Danger},
			{Label: "Cancel", CustomID: r.wtID(key, "keep"), Style: chat.Secondary},
		}}}})
	case "confirm":
		if err := resp.DeferUpdate(); err != nil {
			return
		}
		rel, err := r.opt.Sessions.ReleaseWorktree(r.ctx, key, true)
		switch {
		case err != nil:
			_ = resp.Edit(chat.Message{Content: "⚠️ Could not delete the worktree: " + err.Error()})
		case rel.Removed:
			_ = resp.Edit(chat.Message{Content: fmt.Sprintf("🗑️ Deleted the worktree `%s` and its branch `%s`.", rel.Path, rel.Branch)})
		default:
			_ = resp.Edit(chat.Message{Content: "This thread has no worktree any more."})
		}
	case "keep":
		_ = resp.Update(chat.Message{Content: base + "\nKept."})
	default:
		_ = resp.Respond(chat.Reply{Content: "This button is no longer valid.", Ephemeral: true})
	}
}

// HandleThreadDeleted treats a deleted thread like an archived one.
func (r *Router) HandleThreadDeleted(server, threadID, parentID string) {
	r.HandleThreadArchived(server, threadID, parentID)
}
