package router

import (
	"context"
	"errors"
	"strings"

	"github.com/ccbridge/ccbridge/internal/audit"
	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/land"
)

// landKind is the custom_id kind of the landing commands' buttons and
// modals.
const landKind = land.Kind

// landCtx is the context of one landing command.
func (r *Router) landCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.ctx, land.Budget)
}

// lander is the landing feature over this router's git, sessions and log.
func (r *Router) lander() land.Lander {
	l := land.Lander{Git: r.opt.Land, Sessions: r.opt.Sessions, ID: r.landID, Log: r.opt.Log}
	if r.opt.Registry != nil {
		l.AuditDir = r.opt.Registry.Dir.Root()
	}
	return l
}

func (r *Router) landTarget(tg target) (land.Target, error) {
	if r.opt.Land == nil {
		return land.Target{}, errors.New("git commands are not available")
	}
	if tg.threadID != "" && r.opt.Registry != nil {
		if reg, err := r.opt.Registry.Sessions.Get(tg.key); err == nil && reg.Worktree != "" {
			return land.Target{Server: tg.rt.server.Name, Project: tg.rt.project.Name, Dir: reg.Worktree, Base: reg.BaseCommit, Repo: reg.Repo, Branch: reg.Branch, Tree: true, Label: "branch `" + reg.Branch + "`",
				From: frontEnd(tg.rt.server)}, nil
		}
	}
	dir := ""
	if s, err := r.opt.Store.Sessions.Get(tg.key); err == nil && s.Cwd != "" {
		dir = s.Cwd
	}
	if dir == "" {
		d, err := tg.rt.project.ProjectPath()
		if err != nil {
			return land.Target{}, err
		}
		dir = d
	}
	return land.Target{Server: tg.rt.server.Name, Project: tg.rt.project.Name, Dir: dir, Base: "HEAD", Repo: dir, Label: "`" + dir + "` (uncommitted changes)",
		From: frontEnd(tg.rt.server)}, nil
}

// frontEnd names the front end a server's people act on (audit's From),
// for the words and records that say where an action came from.
func frontEnd(s config.Server) string {
	if s.Telegram() {
		return audit.FromTelegram
	}
	return audit.FromDiscord
}

// busy reports whether Claude is mid-turn in the session: git must not
// run under it.
func (r *Router) busy(key string) bool {
	s, err := r.opt.Store.Sessions.Get(key)
	return err == nil && s.Busy
}

// landInteractive answers the commands that open a form or ask before
// acting, which must be the interaction's first answer (no deferral). It
// reports whether it answered.
func (r *Router) landInteractive(ev chat.CommandEvent, tg target, resp chat.Responder) bool {
	if ev.Name != "commit" || strings.TrimSpace(ev.Options["message"]) != "" {
		return false
	}
	lt, err := r.landTarget(tg)
	if err != nil || !lt.Tree || r.busy(tg.key) {
		return false // answered by runLand after the deferral
	}
	_ = resp.OpenModal(r.lander().CommitModal(tg.key, "commit", r.commitDraft(tg)))
	return true
}

// commitDraft is the message a commit form opens with. A modal cannot
// follow a deferral, so the form must open within Discord's 3 seconds:
// no git runs first (a diff of a large tree, or a cold cache, takes
// longer). The thread's name says what its work was about; a clean tree
// is told so when the form is submitted (commit).
func (r *Router) commitDraft(tg target) string {
	if reg, err := r.opt.Registry.Sessions.Get(tg.key); err == nil && strings.TrimSpace(reg.ThreadName) != "" {
		return strings.TrimSpace(reg.ThreadName)
	}
	return "Update"
}

func (r *Router) landID(key, action string, args ...string) string {
	id, _ := chat.ID{Instance: r.opt.Instance, Kind: landKind, Args: append([]string{key, action}, args...)}.Encode()
	return id
}

// runLand runs a landing command after the deferral; ok is false for a
// command that is not one of them.
func (r *Router) runLand(ev chat.CommandEvent, tg target) (chat.Reply, bool) {
	switch ev.Name {
	case "audit":
		return r.lander().Audit(ev.Options["count"], func(e audit.Entry) bool { return r.auditedIn(e, tg.rt) }), true
	case "diff", "commit", "merge", "discard":
	default:
		return chat.Reply{}, false
	}
	lt, err := r.landTarget(tg)
	if err != nil {
		return chat.Reply{Content: "⚠️ " + chat.ErrText(err)}, true
	}
	if r.busy(tg.key) {
		return chat.Reply{Content: land.Busy(r.agentOf(tg))}, true
	}
	ctx, cancel := r.landCtx()
	defer cancel()
	l := r.lander()
	switch ev.Name {
	case "diff":
		return r.diffReply(ctx, ev, tg, lt), true
	case "commit":
		msg := strings.TrimSpace(ev.Options["message"])
		if !lt.Tree {
			if msg != "" {
				r.pending.Store(tg.key, msg)
			}
			return l.CheckoutWarning(tg.key, lt), true
		}
		if msg == "" {
			return chat.Reply{Content: "Nothing to commit: the worktree is clean."}, true
		}
		return l.Commit(ctx, tg.key, lt, msg, ev.User), true
	case "merge":
		return l.Merge(ctx, tg.key, lt, ev.User, ""), true
	default: // discard
		return l.AskDiscard(ctx, tg.key, lt, ev.User), true
	}
}

// diffReply answers /diff, its patch posted in the channel and the web
// view's link beside its controls.
func (r *Router) diffReply(ctx context.Context, ev chat.CommandEvent, tg target, lt land.Target) chat.Reply {
	return r.lander().Diff(ctx, tg.key, lt, land.Shown{
		Who:  chat.Mention(ev.User),
		Link: func(ctx context.Context) (chat.Button, string) { return r.diffLink(ctx, ev, tg) }, // web.go
		Attach: func(ctx context.Context, m chat.Message) error {
			_, err := r.opt.Replier.Post(ctx, tg.rt.server.Name, ev.ChannelID, m)
			return err
		},
	})
}

// landAction answers the landing buttons; args are what follows the
// action in the custom_id.
func (r *Router) landAction(ev chat.ComponentEvent, key, action string, args []string, resp chat.Responder) {
	tg, ok := r.targetByKey(ev.Server, ev.ChannelID, key)
	if !ok {
		_ = resp.Respond(chat.Reply{Content: "This button is no longer valid.", Ephemeral: true})
		return
	}
	key = tg.key // the custom_id may hold its hash
	lt, err := r.landTarget(tg)
	if err != nil {
		_ = resp.Respond(chat.Reply{Content: "⚠️ " + chat.ErrText(err), Ephemeral: true})
		return
	}
	ctx, cancel := r.landCtx()
	defer cancel()
	l := r.lander()
	switch action {
	case "commitask":
		msg, _ := r.pending.LoadAndDelete(key)
		prefill, _ := msg.(string)
		if prefill == "" {
			prefill = r.commitDraft(tg)
		}
		_ = resp.OpenModal(l.CommitModal(key, "commitforce", prefill))
	case "discard":
		if len(args) != 1 {
			_ = resp.Respond(chat.Reply{Content: "This question is from an older ccbridge; nothing was discarded. Run /discard again.", Ephemeral: true})
			return
		}
		if r.busy(key) {
			_ = resp.Respond(chat.Reply{Content: land.Busy(r.agentOf(tg)), Ephemeral: true})
			return
		}
		if err := resp.DeferUpdate(); err != nil {
			return
		}
		_, _ = resp.Edit(l.Discard(ctx, key, lt, args[0], ev.User))
	case "merge":
		// /diff's "Merge this": its custom_id holds the commit the diff
		// showed; the answer is a message of its own (the diff stays).
		if len(args) != 1 || args[0] == "" {
			_ = resp.Respond(chat.Reply{Content: "This button is no longer valid; nothing was merged. Run /diff again.", Ephemeral: true})
			return
		}
		if r.busy(key) {
			_ = resp.Respond(chat.Reply{Content: land.Busy(r.agentOf(tg)), Ephemeral: true})
			return
		}
		if err := resp.Defer(false); err != nil {
			return
		}
		_, _ = resp.Edit(l.Merge(ctx, key, lt, ev.User, args[0]))
	case "remove":
		r.removeMerged(ctx, key, tg, lt, ev.User, resp)
	case "keep":
		_, _ = resp.Update(land.Kept(ev.User))
	default:
		_ = resp.Respond(chat.Reply{Content: "This button is no longer valid.", Ephemeral: true})
	}
}

// removeMerged removes a thread's worktree and branch after /merge when
// that loses nothing (land.Lander.RemoveMerged), and archives the thread.
func (r *Router) removeMerged(ctx context.Context, key string, tg target, lt land.Target, u chat.User, resp chat.Responder) {
	if r.busy(key) {
		_ = resp.Respond(chat.Reply{Content: land.Busy(r.agentOf(tg)), Ephemeral: true})
		return
	}
	if err := resp.DeferUpdate(); err != nil {
		return
	}
	reply, removed := r.lander().RemoveMerged(ctx, key, lt, u)
	_, _ = resp.Edit(reply)
	// Last: nothing can be edited in an archived thread.
	if removed && tg.threadID != "" {
		if err := r.opt.Replier.ArchiveThread(ctx, tg.rt.server.Name, tg.threadID); err != nil {
			r.opt.Log.Warn("could not archive a merged thread", "session", key, "err", err)
		}
	}
}

// landModal commits with the message from the form.
func (r *Router) landModal(ev chat.ModalEvent, key, action string, resp chat.Responder) {
	tg, ok := r.targetByKey(ev.Server, ev.ChannelID, key)
	if !ok || (action != "commit" && action != "commitforce") {
		_ = resp.Respond(chat.Reply{Content: "This form is no longer valid.", Ephemeral: true})
		return
	}
	key = tg.key // the custom_id may hold its hash
	if err := resp.Defer(false); err != nil {
		return
	}
	lt, err := r.landTarget(tg)
	switch {
	case err != nil:
		_, _ = resp.Edit(chat.Reply{Content: "⚠️ " + chat.ErrText(err)})
	case r.busy(key):
		_, _ = resp.Edit(chat.Reply{Content: land.Busy(r.agentOf(tg))})
	case strings.TrimSpace(ev.Values["message"]) == "":
		_, _ = resp.Edit(chat.Reply{Content: "⚠️ A commit needs a message."})
	default:
		ctx, cancel := r.landCtx()
		defer cancel()
		_, _ = resp.Edit(r.lander().Commit(ctx, key, lt, ev.Values["message"], ev.User))
	}
}

// targetByKey finds the target of a channel or thread whose session key is
// known (component and modal events do not carry a thread's parent).
func (r *Router) targetByKey(server, channelID, key string) (target, bool) {
	for _, s := range r.conf().Servers {
		if s.Name != server {
			continue
		}
		for _, p := range s.Projects {
			// A long key reaches the custom_id hashed (chat.ID.Encode).
			if tg, ok := r.resolve(server, channelID, p.ChannelID); ok && chat.ArgIs(key, tg.key) {
				return tg, true
			}
		}
	}
	return target{}, false
}

// auditedIn reports whether an entry belongs to a project: its server, and
// its project as recorded or, for entries that name only their session
// (permission prompts), as that session's records say. An entry that
// cannot be placed is left out.
func (r *Router) auditedIn(e audit.Entry, rt route) bool {
	if e.Server != rt.server.Name {
		return false
	}
	project := e.Project
	if project == "" && e.Session != "" {
		if g, err := r.opt.Registry.Sessions.Get(e.Session); err == nil && g.Server == e.Server {
			project = g.Project
		} else if s, err := r.opt.Store.Sessions.Get(e.Session); err == nil && s.Server == e.Server {
			project = s.Project
		}
	}
	return project != "" && project == rt.project.Name
}
