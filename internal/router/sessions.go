package router

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/conversations"
	"github.com/ccbridge/ccbridge/internal/history"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
)

// Takeovers is what /sessions, its buttons and /fork need of the session
// manager beyond Sessions (the real manager has both).
type Takeovers interface {
	LiveSessions(ctx context.Context, server, project string) ([]session.LiveSession, error)
	History(server, project, dir string, limit int) ([]history.Conversation, error)
	Conversation(server, project, dir, id string) (history.Conversation, bool)
	LiveRecord(claudeSessionID string) (state.Live, error)
	TakeOver(ctx context.Context, t session.Target, claudeSessionID string) error
}

// sessionsKind marks the buttons of a /sessions listing.
const sessionsKind = conversations.Kind

// SessionCommands are /sessions and /fork, registered with the others.
func SessionCommands() []chat.CommandSpec { return conversations.Commands() }

// takeovers finds the Takeovers of the session manager, also behind a
// wrapper that adds to Sessions (one with an Unwrap method).
func (r *Router) takeovers() (Takeovers, bool) {
	s := r.opt.Sessions
	for {
		if t, ok := s.(Takeovers); ok {
			return t, true
		}
		w, ok := s.(interface{ Unwrap() Sessions })
		if !ok {
			return nil, false
		}
		s = w.Unwrap()
	}
}

// runSessions answers /sessions and /fork.
func (r *Router) runSessions(ev chat.CommandEvent, tg target) chat.Reply {
	if ev.Name == "fork" {
		return r.forkCommand(ev, tg)
	}
	return r.listSessions(tg)
}

// listSessions answers /sessions in a project channel.
func (r *Router) listSessions(tg target) chat.Reply {
	if tg.threadID != "" {
		return chat.Reply{Content: "Use /sessions in the project channel, not inside a thread."}
	}
	tk, ok := r.takeovers()
	if !ok {
		return chat.Reply{Content: "⚠️ Listing sessions is not available."}
	}
	ctx := r.ctx
	srv, proj := tg.rt.server.Name, tg.rt.project.Name
	dir, err := tg.rt.project.ProjectPath()
	if err != nil {
		return chat.Reply{Content: "⚠️ " + chat.ErrText(err)}
	}
	live, err := tk.LiveSessions(ctx, srv, proj)
	if err != nil {
		return chat.Reply{Content: "⚠️ " + chat.ErrText(err)}
	}
	speaker := r.agentTitle(srv, proj)
	past, err := tk.History(srv, proj, dir, conversations.Past(len(live)))
	if err != nil {
		return chat.Reply{Content: "⚠️ Could not read " + speaker + "'s history: " + chat.ErrText(err)}
	}
	return conversations.List(speaker, dir, live, past, r.now(), r.ssID)
}

func (r *Router) ssID(args ...string) string {
	id, err := chat.ID{Instance: r.opt.Instance, Kind: sessionsKind, Args: args}.Encode()
	if err != nil {
		r.opt.Log.Error("sessions button", "err", err)
		return "cb1|" + r.opt.Instance + "|" + sessionsKind + "|invalid"
	}
	return id
}

// sessionsAction answers Take over, Resume and Fork; only in the project
// channel the listing was made in.
func (r *Router) sessionsAction(ev chat.ComponentEvent, args []string, resp chat.Responder) {
	tg, ok := r.resolve(ev.Server, ev.ChannelID, "")
	tk, ok2 := r.takeovers()
	if !ok || !ok2 || len(args) < 2 {
		_ = resp.Respond(chat.Reply{Content: "This button is no longer valid.", Ephemeral: true})
		return
	}
	if err := resp.Defer(false); err != nil {
		return
	}
	var reply chat.Reply
	switch args[0] {
	case "take":
		reply = r.takeOver(tk, tg, args[1])
	case "resume", "fork", "here":
		reply = r.pastConversation(tk, tg, args)
	default:
		reply = chat.Reply{Content: "This button is no longer valid."}
	}
	if _, err := resp.Edit(reply); err != nil {
		r.opt.Log.Error("could not answer a sessions button", "err", err)
	}
}

// takeOver binds a hand-started Claude to a new thread.
func (r *Router) takeOver(tk Takeovers, tg target, arg string) chat.Reply {
	ctx := r.ctx
	live, err := r.findLive(tk, tg, arg)
	if err != nil {
		return chat.Reply{Content: "⚠️ " + chat.ErrText(err)}
	}
	if !live.Driveable() {
		return chat.Reply{Content: "⚠️ " + session.ErrNotDriveable.Error()}
	}
	name := conversations.ThreadTitle("", live.FirstPrompt, "Claude in "+filepath.Base(live.Cwd))
	threadID, err := r.opt.Replier.StartThread(ctx, tg.rt.server.Name, tg.rt.project.ChannelID, name)
	if err != nil {
		return chat.Reply{Content: "⚠️ Could not start the thread: " + chat.ErrText(err)}
	}
	th := target{key: session.ThreadKey(tg.rt.server.Name, tg.rt.project.Name, threadID), rt: tg.rt, threadID: threadID}
	r.remember(th.key, func(g *state.Registered) {
		g.Server, g.Project, g.ThreadID, g.ThreadName, g.ClaudeSessionID = tg.rt.server.Name, tg.rt.project.Name, threadID, name, live.ClaudeSessionID
	})
	t, err := r.sessionTarget(th)
	if err == nil {
		err = tk.TakeOver(ctx, t, live.ClaudeSessionID)
	}
	if err != nil {
		r.send(tg.rt.server.Name, threadID, "⚠️ Could not take this Claude over: "+chat.ErrText(err))
		return chat.Reply{Content: "⚠️ Could not take it over: " + chat.ErrText(err)}
	}
	msg := fmt.Sprintf("🖐 Took over the Claude running by hand in `%s` (pane `%s`). Messages here are typed into it; its replies and prompts come here. "+
		"It stays your terminal: you can keep typing there too, and archiving this thread only releases it.", chat.Clip(live.Cwd, 200), live.Pane)
	if c, err := history.Read(live.TranscriptPath); live.TranscriptPath != "" && err == nil {
		msg += conversations.LastExchange(c)
	}
	r.send(tg.rt.server.Name, threadID, msg)
	return chat.Reply{Content: "🖐 Took over in <#" + threadID + ">."}
}

// pastConversation answers Resume, Fork and Resume here, from a listing
// young enough, and resumes only a conversation that no Claude runs now:
// two Claudes on one conversation both write its transcript
// (security-2.md finding 16). A fork is a new conversation, so it may copy
// a running one.
func (r *Router) pastConversation(tk Takeovers, tg target, args []string) chat.Reply {
	if len(args) < 3 {
		return chat.Reply{Content: "This listing is from an older ccbridge; run /sessions again."}
	}
	if why := conversations.Stale(args[2], r.now()); why != "" {
		return chat.Reply{Content: why}
	}
	if args[0] == "fork" {
		return r.resumeButton(tk, tg, args[1], true)
	}
	if where := r.runningConversation(tk, tg, args[1]); where != "" {
		return chat.Reply{Content: "⚠️ That conversation is running now (" + where + "); resuming it too would put two Claudes on it. Fork it instead, or talk to it there."}
	}
	if args[0] == "here" {
		return r.resumeHere(tk, tg, args[1])
	}
	return r.resumeButton(tk, tg, args[1], false)
}

// runningConversation says where a Claude runs on the conversation a
// button names ("" when none does): a session of ccbridge's (a Discord
// one, or an MCP client's, which /sessions does not list) whose pane is
// alive, or a Claude started by hand in this project.
func (r *Router) runningConversation(tk Takeovers, tg target, arg string) string {
	all, _ := r.opt.Store.Sessions.List()
	for k, s := range all {
		if s.ClaudeSessionID == "" || !chat.ArgIs(arg, s.ClaudeSessionID) {
			continue
		}
		if st, err := r.opt.Sessions.Status(r.ctx, k); err == nil && st.State != "stopped" {
			if strings.HasPrefix(k, "mcp@") {
				return "in a session of an MCP client"
			}
			return "in ccbridge's session " + k
		}
	}
	live, _ := tk.LiveSessions(r.ctx, tg.rt.server.Name, tg.rt.project.Name)
	for _, l := range live {
		if chat.ArgIs(arg, l.ClaudeSessionID) {
			return "in a Claude started by hand"
		}
	}
	return ""
}

// findLive finds the hand-started Claude a button names, in this project.
func (r *Router) findLive(tk Takeovers, tg target, arg string) (state.Live, error) {
	list, err := tk.LiveSessions(r.ctx, tg.rt.server.Name, tg.rt.project.Name)
	if err != nil {
		return state.Live{}, err
	}
	for _, l := range list {
		if l.Hand && l.Key == "" && chat.ArgIs(arg, l.ClaudeSessionID) {
			return tk.LiveRecord(l.ClaudeSessionID)
		}
	}
	return state.Live{}, errors.New("that Claude is no longer running here (or was taken over already); run /sessions again")
}

// resumeButton continues (or forks) a past conversation in a new thread.
func (r *Router) resumeButton(tk Takeovers, tg target, arg string, fork bool) chat.Reply {
	c, why, ok := r.findConversation(tk, tg, arg)
	if !ok {
		return why
	}
	if fork && !conversations.Forkable(c) {
		// Even from a forged button: the agent would resume the
		// conversation itself, a second session on it.
		return chat.Reply{Content: "⚠️ " + r.agentTitle(tg.rt.server.Name, tg.rt.project.Name) + "'s conversations cannot be forked from here; resume it instead."}
	}
	verb, prefix := "Resumed", ""
	if fork {
		verb, prefix = "Forked", "fork: "
	}
	threadID, err := r.startFrom(tg, c.ID, conversations.ThreadTitle(prefix, c.FirstPrompt, c.ID), fork, "")
	if err != nil {
		return chat.Reply{Content: "⚠️ " + chat.ErrText(err)}
	}
	note := fmt.Sprintf("▶️ %s the conversation “%s” (%d turn(s)).", verb, chat.Clip(conversations.OneLine(c.FirstPrompt), 200), c.Turns)
	if fork {
		note += " This is a copy: the original conversation stays as it was."
	}
	r.send(tg.rt.server.Name, threadID, note+conversations.LastExchange(c))
	return chat.Reply{Content: fmt.Sprintf("▶️ %s in <#%s>.", verb, threadID)}
}

// startFrom starts a thread whose session resumes (or forks) a Claude
// conversation, with prompt as its first message or, without one, started
// at once so it is ready.
func (r *Router) startFrom(tg target, claudeSessionID, name string, fork bool, prompt string) (string, error) {
	threadID, err := r.opt.Replier.StartThread(r.ctx, tg.rt.server.Name, tg.rt.project.ChannelID, name)
	if err != nil {
		return "", fmt.Errorf("could not start the thread: %w", err)
	}
	th := target{key: session.ThreadKey(tg.rt.server.Name, tg.rt.project.Name, threadID), rt: tg.rt, threadID: threadID}
	r.remember(th.key, func(g *state.Registered) {
		g.Server, g.Project, g.ThreadID, g.ThreadName, g.ClaudeSessionID = tg.rt.server.Name, tg.rt.project.Name, threadID, name, claudeSessionID
		g.ForkOf = ""
		if fork {
			g.ForkOf = claudeSessionID
		}
	})
	if prompt != "" {
		r.enqueue(th, item{ev: chat.MessageEvent{Server: tg.rt.server.Name, ChannelID: threadID, ParentID: tg.rt.project.ChannelID, Content: prompt}})
		return threadID, nil
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		t, err := r.sessionTarget(th)
		if err == nil {
			_, _, err = r.opt.Sessions.Ensure(r.ctx, t)
		}
		if err != nil {
			r.send(tg.rt.server.Name, threadID, startFailure(r.agentTitle(t.Server, t.Project), t, err))
		}
	}()
	return threadID, nil
}

// forkCommand answers /fork: the current conversation of this channel or
// thread continues in a new thread; this one is left as it is.
func (r *Router) forkCommand(ev chat.CommandEvent, tg target) chat.Reply {
	cur := ""
	if s, err := r.opt.Store.Sessions.Get(tg.key); err == nil {
		cur = s.ClaudeSessionID
	}
	if cur == "" {
		if g, err := r.opt.Registry.Sessions.Get(tg.key); err == nil {
			cur = g.ClaudeSessionID
		}
	}
	if cur == "" {
		return chat.Reply{Content: "There is no conversation here to fork yet."}
	}
	prompt := strings.TrimSpace(ev.Options["prompt"])
	threadID, err := r.startFrom(tg, cur, conversations.ThreadTitle("fork: ", prompt, "fork of "+tg.rt.project.Name), true, prompt)
	if err != nil {
		return chat.Reply{Content: "⚠️ " + chat.ErrText(err)}
	}
	return chat.Reply{Content: "🍴 Forked this conversation into <#" + threadID + ">; this one stays as it is."}
}

// findConversation finds the past conversation of the target's project a
// button names, or returns the reply that says why it cannot.
func (r *Router) findConversation(tk Takeovers, tg target, arg string) (history.Conversation, chat.Reply, bool) {
	dir, err := tg.rt.project.ProjectPath()
	if err != nil {
		return history.Conversation{}, chat.Reply{Content: "⚠️ " + chat.ErrText(err)}, false
	}
	srv, proj := tg.rt.server.Name, tg.rt.project.Name
	c, why := conversations.Find(tk, srv, proj, r.agentTitle(srv, proj), dir, arg)
	return c, chat.Reply{Content: why}, why == ""
}

// resumeHere continues a past conversation in the channel's own session,
// only while that session is not in a turn or a prompt: its current
// conversation is ended (/exit, so it stays in Claude's records and in
// /sessions) and the channel's Claude restarts with --resume.
func (r *Router) resumeHere(tk Takeovers, tg target, arg string) chat.Reply {
	ctx := r.ctx
	c, why, ok := r.findConversation(tk, tg, arg)
	if !ok {
		return why
	}
	if st, err := r.opt.Sessions.Status(ctx, tg.key); err != nil {
		return chat.Reply{Content: "⚠️ " + chat.ErrText(err)}
	} else if st.State == "busy" || st.State == "waiting on a prompt" {
		return chat.Reply{Content: "⚠️ This channel's Claude is " + st.State + "; resume it here once it is idle, or in a thread."}
	}
	if err := r.opt.Sessions.Stop(ctx, tg.key); err != nil {
		return chat.Reply{Content: "⚠️ Could not end this channel's session: " + chat.ErrText(err)}
	}
	r.remember(tg.key, func(g *state.Registered) { g.ClaudeSessionID, g.ForkOf = c.ID, "" })
	t, err := r.sessionTarget(tg)
	if err == nil {
		_, _, err = r.opt.Sessions.Ensure(ctx, t)
	}
	if err != nil {
		return chat.Reply{Content: startFailure(r.agentTitle(t.Server, t.Project), t, err)}
	}
	return chat.Reply{Content: fmt.Sprintf("▶️ Resumed the conversation “%s” (%d turn(s)) in this channel.", chat.Clip(conversations.OneLine(c.FirstPrompt), 200), c.Turns) + conversations.LastExchange(c)}
}
