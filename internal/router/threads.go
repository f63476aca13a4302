package router

import (
	"context"
	"strings"
	"time"

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
}
