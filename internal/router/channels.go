package router

import (
	"context"
	"fmt"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
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
	all, err := r.opt.Registry.Sessions.List()
	if err != nil {
		r.opt.Log.Error("could not list the project's threads", "err", err)
	}
	for _, g := range all {
		if g.Server == server && g.Project == project && g.ThreadID != "" && !g.Archived {
			r.HandleThreadDeleted(server, g.ThreadID, channelID)
		}
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.stopWhenTurnEnds(tg)
	}()
	if panel := tg.rt.server.GeneralChannelID; panel != "" {
		agent := r.agentTitle(server, project)
		r.send(server, panel, fmt.Sprintf("⚠️ The channel of project **%s** was deleted. Its %s session stops when its turn ends, with its threads' (their conversations stay in %s's history). "+
			"Give the project another channel (its `channel_id` in the config) or remove the project, then reload.",
			chat.Clip(project, 100), agent, agent))
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
