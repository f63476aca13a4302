package router

import (
	"errors"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/usage"
)

// usageText answers /usage: the figures of tg's project's sessions
// (internal/usage).
func (r *Router) usageText(tg target) string {
	sessions, err := r.opt.Store.Sessions.List()
	if err != nil && len(sessions) == 0 {
		return "⚠️ " + chat.ErrText(err)
	}
	ext, err := state.OpenExtras(r.opt.Store.Dir)
	if err != nil {
		return "⚠️ " + chat.ErrText(err)
	}
	return usage.Text(tg.rt.label(), tg.rt.server.Name, tg.rt.project.Name, sessions, ext.Statuses, r.now()) // open.go: label
}

// continueAtResetButton arms a Continue at reset offer: the daemon sends
// "continue" to the session once the limit's reset time has passed.
func (r *Router) continueAtResetButton(ev chat.ComponentEvent, args []string, resp chat.Responder) {
	ext, err := state.OpenExtras(r.opt.Store.Dir)
	if err != nil {
		_ = resp.Respond(chat.Reply{Content: "⚠️ " + chat.ErrText(err), Ephemeral: true})
		return
	}
	key, res, err := usage.Arm(r.ctx, ext.Resumes, ev.Server, ev.ChannelID, args[0], ev.User.ID)
	switch {
	case errors.Is(err, usage.ErrNoOffer):
		_ = resp.Respond(chat.Reply{Content: usage.NoOfferText, Ephemeral: true})
		return
	case err != nil:
		_ = resp.Respond(chat.Reply{Content: "⚠️ " + chat.ErrText(err), Ephemeral: true})
		return
	}
	r.opt.Log.Info("continue at reset armed", "session", key, "at", res.At, "by", ev.User.ID)
	_, _ = resp.Update(chat.Message{Content: usage.ArmedText(res, r.now(), ev.User)})
}
