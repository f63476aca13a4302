package router

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ccbridge/ccbridge/internal/audit"
	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/opened"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
)

// The commands of internal/opened, as the dispatch names them.
const (
	openName  = opened.OpenName
	closeName = opened.CloseName
)

// suggestFolders suggests the folders under the server's open_roots as
// /open's path is typed.
func (r *Router) suggestFolders(tg target, typed string) []chat.Choice {
	return opened.Suggest(tg.rt.server.OpenRoots, typed, time.Now().Add(opened.SuggestBudget))
}

// openedThread finds the session of a thread opened with /open. known says
// whether /open made the thread; a thread closed since has no session
// (key ""), and is not a thread of its parent's project either.
func (r *Router) openedThread(server, threadID string) (tg target, known bool) {
	if r.opt.Registry == nil || r.opt.Registry.Opened == nil {
		return target{}, false
	}
	o, err := r.opt.Registry.Opened.Get(threadID)
	if err != nil || o.Server != server {
		return target{}, false
	}
	srv, ok := r.server(server)
	if !ok || o.Closed {
		return target{}, true
	}
	return target{key: session.ThreadKey(server, session.OpenedProject, threadID), rt: route{server: srv, project: opened.Project(o)}, threadID: threadID}, true
}

// label names a route's project in answers: the project name of opened
// folders is no name a person gave.
func (rt route) label() string {
	if rt.project.Name == session.OpenedProject {
		return "folders opened with /open"
	}
	return rt.project.Name
}

func (r *Router) server(name string) (config.Server, bool) {
	for _, s := range r.conf().Servers {
		if s.Name == name {
			return s, true
		}
	}
	return config.Server{}, false
}

// panelTarget stands for the server's control-panel channel, where /open
// may run too, when this machine answers there (it leads the panel
// channel of the machines sharing the bot).
func (r *Router) panelTarget(server, channelID string) (target, bool) {
	srv, ok := r.server(server)
	if !ok || srv.GeneralChannelID == "" || srv.GeneralChannelID != channelID {
		return target{}, false
	}
	if r.opt.Fleet != nil && !r.opt.Fleet.Leads(server) {
		return target{}, false
	}
	return target{rt: route{server: srv}}, true
}

// runOpen answers /open and /close.
func (r *Router) runOpen(ev chat.CommandEvent, tg target) chat.Reply {
	if ev.Name == closeName {
		return r.closeOpened(tg)
	}
	return r.openFolder(ev, tg)
}

// openFolder answers /open: a thread named after the folder, in the
// channel the command ran in, bound to a new session in the folder,
// started at once (its first start may ask the owner to trust it).
func (r *Router) openFolder(ev chat.CommandEvent, tg target) chat.Reply {
	if tg.threadID != "" {
		return chat.Reply{Content: "Use /open in a project channel or the control-panel channel, not inside a thread."}
	}
	roots := tg.rt.server.OpenRoots
	if len(roots) == 0 {
		return chat.Reply{Content: "⚠️ /open is off: list the folders it may open under as open_roots in this server's [[servers]] config, such as open_roots = [\"~/src\"]."}
	}
	iso := ev.Options["isolation"]
	if iso != "" && iso != "none" && iso != "worktree" {
		return chat.Reply{Content: "⚠️ isolation is none or worktree."}
	}
	if pick, ok := r.folderPicker(tg, ev.Options["path"], iso); ok { // open_pick.go
		return pick
	}
	// Why a folder is not opened names paths: on Telegram, whose group
	// reads every answer, it goes to the asker alone.
	private := tg.rt.server.Telegram()
	dir, err := opened.Resolve(roots, ev.Options["path"])
	if err != nil {
		return chat.Reply{Content: "⚠️ Not opened: " + chat.ErrText(err), Ephemeral: private}
	}
	if why := opened.Around(r.conf(), dir); why != "" {
		return chat.Reply{Content: "⚠️ Not opened: " + why, Ephemeral: private}
	}
	name := filepath.Base(dir)
	if r := []rune(name); len(r) > maxThreadName {
		name = string(r[:maxThreadName])
	}
	server := tg.rt.server.Name
	threadID, refusal := r.openThread(ev, tg, name)
	if refusal != "" {
		return chat.Reply{Content: refusal}
	}
	if iso == "none" {
		iso = ""
	}
	o := opened.From(state.Opened{Server: server, ChannelID: ev.ChannelID, ThreadID: threadID, Path: dir, Isolation: iso, Owner: ev.User.ID, Created: r.now().UTC()}, tg.rt.project)
	if _, err := r.opt.Registry.Opened.Create(r.ctx, threadID, o); err != nil {
		return chat.Reply{Content: "⚠️ Could not remember the opened folder: " + chat.ErrText(err)}
	}
	th, _ := r.openedThread(server, threadID)
	r.remember(th.key, func(g *state.Registered) {
		g.Server, g.Project, g.ThreadID, g.ThreadName = server, session.OpenedProject, threadID, name
	})
	r.opt.Log.Info("folder opened", "session", th.key, "dir", dir, "user", ev.User.ID)
	r.wg.Add(1)
	go func() { defer r.wg.Done(); r.startOpened(th, dir) }()
	agent := r.agentOf(th)
	text := fmt.Sprintf("📂 Opened `%s` in <#%s>: its messages go to a %s session started there. /close in the thread stops it.", chat.Clip(dir, 300), threadID, agent)
	if tg.rt.server.Telegram() {
		// Its thread is a topic of the owner's private chat: the group,
		// whose members read every topic, learns no more than that.
		text = "📂 Opened in a new topic of your private chat with me, which only you see: write there to talk to its " + agent + "; /close there stops it."
	}
	if p, ok := r.conf().ProjectHolding(dir); ok {
		text += fmt.Sprintf(" It is in a project's directory: the [policy] of the project %s holds there.", p.Name)
	}
	return chat.Reply{Content: text}
}

// openThread starts an opened folder's thread: a private one, which only
// the owners (and members with Manage Threads there) see, the owner who
// ran /open in it first, the others when they can be added. Everything the
// folder's Claude does is posted there. Where Discord refuses a private
// thread (no Create Private Threads, or a channel type that has none), a
// channel every member can read gets none: /open is refused, saying why; a
// private channel gets a public thread, which its readers alone see.
func (r *Router) openThread(ev chat.CommandEvent, tg target, name string) (threadID, refusal string) {
	server := tg.rt.server.Name
	members := []string{ev.User.ID}
	for _, o := range tg.rt.server.OwnerIDs {
		if o != ev.User.ID {
			members = append(members, o)
		}
	}
	threadID, missed, err := r.opt.Replier.StartPrivateThread(r.ctx, server, ev.ChannelID, name, members)
	if err == nil {
		if len(missed) > 0 {
			r.opt.Log.Warn("owners not added to an opened folder's private thread", "thread", threadID, "owners", missed)
		}
		return threadID, ""
	}
	if tg.rt.server.Telegram() {
		// A private thread there is a topic of the owner's private chat
		// with the bot, and never a group's: its refusal says how to fix it.
		return "", "⚠️ Not opened: " + chat.ErrText(err)
	}
	public, perr := r.opt.Replier.EveryoneCanView(r.ctx, server, ev.ChannelID)
	switch {
	case perr != nil:
		return "", fmt.Sprintf("⚠️ Not opened: %s refused a private thread here (%s), and who can read this channel could not be checked (%s).", audit.Title(frontEnd(tg.rt.server)), chat.ErrText(err), chat.ErrText(perr))
	case public && errors.Is(err, chat.ErrNoPrivateThreads):
		return "", "⚠️ Not opened: there are no private topics here (every member of the group can read every topic), so everything the folder's Claude does would be theirs to read. " +
			"Add the folder to the config as a project of its own instead."
	case public:
		return "", fmt.Sprintf("⚠️ Not opened: every member of this server can read this channel, and Discord refused a private thread here (%s), so everything the folder's Claude does would be theirs to read. "+
			"Give the bot Create Private Threads in this channel, or use /open in a private channel (a project channel).", chat.ErrText(err))
	}
	r.opt.Log.Info("no private thread for an opened folder; a public one in a private channel", "channel", ev.ChannelID, "err", err)
	threadID, err = r.opt.Replier.StartThread(r.ctx, server, ev.ChannelID, name)
	if err != nil {
		return "", "⚠️ Could not start the thread: " + chat.ErrText(err)
	}
	return threadID, ""
}

// startOpened starts an opened folder's session and says so in its thread.
func (r *Router) startOpened(th target, dir string) {
	t, err := r.sessionTarget(th)
	if err == nil {
		_, _, err = r.opt.Sessions.Ensure(r.ctx, t)
	}
	if r.ctx.Err() != nil {
		return
	}
	server := th.rt.server.Name
	if err != nil {
		r.opt.Log.Error("could not start an opened folder's session", "session", th.key, "err", err)
		r.send(server, th.threadID, startFailure(r.agentOf(th), t, err))
		return
	}
	r.send(server, th.threadID, fmt.Sprintf("🟢 %s is running in `%s`. Write here to talk to it.", r.agentOf(th), chat.Clip(dir, 300)))
}

// closeOpened answers /close in an opened folder's thread: its session
// stops and the folder is forgotten (the thread is no project's thread
// either). The conversation stays in Claude's history, to resume.
func (r *Router) closeOpened(tg target) chat.Reply {
	if tg.threadID == "" || tg.rt.project.Name != session.OpenedProject {
		return chat.Reply{Content: "Use /close in a thread opened with /open."}
	}
	ctx, cancel := context.WithTimeout(r.ctx, time.Minute)
	defer cancel()
	if err := r.opt.Sessions.Stop(ctx, tg.key); err != nil {
		return chat.Reply{Content: "⚠️ Could not stop " + r.agentOf(tg) + ", so the folder stays open: " + chat.ErrText(err)}
	}
	if _, err := r.opt.Registry.Opened.Update(ctx, tg.threadID, func(o *state.Opened) error { o.Closed = true; return nil }); err != nil {
		return chat.Reply{Content: "⚠️ " + r.agentOf(tg) + " stopped, but the folder could not be forgotten: " + chat.ErrText(err)}
	}
	r.remember(tg.key, func(g *state.Registered) { g.Archived = true })
	dropped := r.dropThreadSchedules(tg, false) // schedule.go
	if tg.rt.project.Thread.Isolation == "worktree" {
		r.wg.Add(1)
		go func() { defer r.wg.Done(); r.stopThread(tg, false) }() // its worktree, as on archive
	}
	r.opt.Log.Info("opened folder closed", "session", tg.key)
	text := fmt.Sprintf("📁 Closed `%s`: %s stopped and ccbridge forgot the folder.", chat.Clip(tg.rt.project.Path, 300), r.agentOf(tg))
	if reg, err := r.opt.Registry.Sessions.Get(tg.key); err == nil && reg.ClaudeSessionID != "" {
		text += fmt.Sprintf(" The conversation can be resumed there with `%s`.", r.resumeHint(tg.rt.project, reg.ClaudeSessionID))
	}
	if dropped != "" {
		text += "\n" + dropped
	}
	return chat.Reply{Content: text}
}

// openedIn reports whether a thread was opened with /open in channelID
// (also when closed since: its kept worktree is reported there).
func (r *Router) openedIn(server, threadID, channelID string) bool {
	o, err := r.opt.Registry.Opened.Get(threadID)
	return err == nil && o.Server == server && o.ChannelID == channelID
}

// forgetOpened forgets the folder of a deleted thread (nothing can be
// written in it any more); any other thread is left alone.
func (r *Router) forgetOpened(tg target) {
	if tg.rt.project.Name != session.OpenedProject {
		return
	}
	if _, err := r.opt.Registry.Opened.Update(r.ctx, tg.threadID, func(o *state.Opened) error { o.Closed = true; return nil }); err != nil {
		r.opt.Log.Error("could not forget a deleted thread's folder", "session", tg.key, "err", err)
	}
}

// withOpened adds the server's opened folders to a /sessions listing.
func (r *Router) withOpened(reply chat.Reply, server string) chat.Reply {
	folders := opened.Folders(r.opt.Registry, server)
	if len(folders) == 0 {
		return reply
	}
	// Telegram's are topics of their owners' private chats, while the
	// listing may be read by the whole group: no thread, no folder.
	srv, _ := r.server(server)
	private := srv.Telegram()
	var b strings.Builder
	b.WriteString("\n**Opened folders** (/open)\n")
	for _, o := range folders {
		key := session.ThreadKey(server, session.OpenedProject, o.ThreadID)
		st, _ := r.opt.Sessions.Status(r.ctx, key)
		state := st.State
		if state == "" {
			state = "stopped"
		}
		if private {
			fmt.Fprintf(&b, "a folder open in a private chat — %s\n", state)
			continue
		}
		fmt.Fprintf(&b, "<#%s> `%s` — %s\n", o.ThreadID, chat.Clip(o.Path, 200), state)
	}
	content := reply.Content + b.String()
	if utf8.RuneCountInString(content) > chat.Limit {
		content = string([]rune(content)[:chat.Limit-1]) + "…"
	}
	reply.Content = content
	return reply
}
