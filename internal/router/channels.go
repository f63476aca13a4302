package router

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/opened"
	"github.com/ccbridge/ccbridge/internal/state"
)

// HandleChannelDeleted answers a project's channel deleted in the chat:
// nobody can read its sessions' replies or drive them any more. Its
// threads' sessions close as deleted threads' do, its own stops when its
// turn ends (a turn cut off may leave half-written files), capped as a
// deleted thread's wait, and the owners hear it in the control panel's
// channel, with what to change in the config: until then the project
// points at a channel that is gone.
func (r *Router) HandleChannelDeleted(server, channelID string) {
	tg, ok := r.resolve(server, channelID, "")
	if !ok || tg.threadID != "" {
		return
	}
	project := tg.rt.project.Name
	r.opt.Log.Error("a project's channel was deleted; its sessions stop", "server", server, "project", project, "channel", channelID)
	// Remembered first: neither a restart nor a schedule starts it there
	// again.
	r.remember(tg.key, func(g *state.Registered) { g.Server, g.Project, g.ChannelGone = server, project, channelID })
	all, err := r.opt.Registry.Sessions.List()
	if err != nil {
		r.opt.Log.Error("could not list the project's threads", "err", err)
	}
	for _, g := range all {
		if g.Server == server && g.Project == project && g.ThreadID != "" && !g.Archived {
			r.HandleThreadDeleted(server, g.ThreadID, channelID)
		}
	}
	for _, o := range opened.Folders(r.opt.Registry, server) {
		if o.ChannelID == channelID {
			r.HandleThreadDeleted(server, o.ThreadID, channelID) // a folder opened there
		}
	}
	dropped := r.dropSchedules(server, func(s state.Schedule) bool { return s.ChannelID == channelID || s.ParentID == channelID })
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.stopWhenTurnEnds(tg)
	}()
	text := goneText(project, r.agentTitle(server, project))
	if len(dropped) > 0 {
		text += fmt.Sprintf("\n🗑 Deleted its %d schedule(s):\n• %s", len(dropped), strings.Join(dropped, "\n• "))
	}
	r.tellPanel(tg, text)
}

// goneText tells the owners a project's channel is gone, and what to do.
func goneText(project, agent string) string {
	return fmt.Sprintf("⚠️ The channel of project **%s** was deleted. Its %s session stops when its turn ends, with its threads' (their conversations stay in %s's history), and is not started there again. "+
		"Give the project another channel (its `channel_id` in the config) or remove the project, then reload.",
		chat.Clip(project, 100), agent, agent)
}

// tellPanel posts text in the control panel's channel of tg's server, if
// it has one (else the log has it).
func (r *Router) tellPanel(tg target, text string) {
	if panel := tg.rt.server.GeneralChannelID; panel != "" {
		r.send(tg.rt.server.Name, panel, text)
	}
}

// errChannelGone refuses to start a project whose channel was deleted.
func errChannelGone(project string) error {
	return fmt.Errorf("the channel of project %s was deleted: give the project another channel_id in the config, or remove it", project)
}

// warnGoneChannels repeats, at start, the word on each project whose
// channel was deleted and which the config still points at it, and stops
// its session if it outlived the daemon that was waiting to stop it.
func (r *Router) warnGoneChannels() {
	for _, rt := range r.tab.Load().routes {
		tg := target{key: rt.server.Name + "-" + rt.project.Name, rt: rt}
		if reg, err := r.opt.Registry.Sessions.Get(tg.key); err == nil && reg.ChannelGone != "" && reg.ChannelGone == tg.rt.project.ChannelID {
			r.opt.Log.Error("a project's channel was deleted; it is not started", "session", tg.key, "channel", reg.ChannelGone)
			r.tellPanel(tg, goneText(tg.rt.project.Name, r.agentTitle(tg.rt.server.Name, tg.rt.project.Name)))
			r.wg.Add(1)
			go func() {
				defer r.wg.Done()
				r.stopWhenTurnEnds(tg)
			}()
		}
	}
}

// stopWhenTurnEnds stops a session once it is not in a turn, or after
// the deleted-thread cap.
func (r *Router) stopWhenTurnEnds(tg target) {
	capped := r.deletedCap
	if capped <= 0 {
		capped = deletedTurnCap
	}
	deadline := time.Now().Add(capped)
	tick := time.NewTicker(min(idleCheck, capped/4))
	defer tick.Stop()
	for {
		st, err := r.opt.Sessions.Status(r.ctx, tg.key)
		if err != nil || st.State == "stopped" {
			return
		}
		if (st.State != "busy" && st.State != "waiting on a prompt") || time.Now().After(deadline) {
			break
		}
		select {
		case <-r.ctx.Done():
			return
		case <-tick.C:
		}
	}
	ctx, cancel := context.WithTimeout(r.ctx, time.Minute)
	defer cancel()
	if err := r.opt.Sessions.Stop(ctx, tg.key); err != nil {
		r.opt.Log.Error("could not stop the session of a deleted channel", "session", tg.key, "err", err)
		return
	}
	r.opt.Log.Info("deleted channel's session stopped", "session", tg.key)
}
