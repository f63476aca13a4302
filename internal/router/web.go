package router

import (
	"context"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/weblink"
)

// runWeb answers /web, only ever to the owner who ran it: the link of the
// channel's session, or in the panel channel the server's index; or with
// revoke, ends every link (internal/weblink).
func (r *Router) runWeb(ev chat.CommandEvent, tg target, resp chat.Responder) {
	if r.opt.Web == nil {
		_ = resp.Respond(chat.Reply{Content: weblink.Off, Ephemeral: true})
		return
	}
	switch ev.Options["revoke"] {
	case "":
		_ = resp.Respond(weblink.Reply(r.opt.Web, weblink.Place{Server: tg.rt.server.Name, Key: tg.key, ThreadID: tg.threadID, Label: tg.rt.label()})) // open.go: label
	case weblink.RevokeAll:
		if err := resp.Defer(true); err != nil {
			return
		}
		reply := chat.Reply{Content: weblink.Revoked, Ephemeral: true}
		if err := r.opt.Web.Revoke(r.ctx); err != nil {
			reply.Content = "⚠️ Could not revoke the links: " + chat.ErrText(err)
		} else {
			r.opt.Log.Info("every web link revoked", "user", ev.User.ID, "server", ev.Server)
		}
		if _, err := resp.Edit(reply); err != nil {
			r.opt.Log.Error("could not answer /web revoke", "err", err)
		}
	default:
		_ = resp.Respond(chat.Reply{Content: weblink.BadOption, Ephemeral: true})
	}
}

// panelWeb answers the panel's 🌐 button: the server's index, privately.
func (r *Router) panelWeb(ev chat.ComponentEvent, resp chat.Responder) {
	if r.opt.Web == nil {
		_ = resp.Respond(chat.Reply{Content: weblink.Off, Ephemeral: true})
		return
	}
	_ = resp.Respond(weblink.Reply(r.opt.Web, weblink.Place{Server: ev.Server}))
}

// diffLink is /diff's "Open in browser" button for the session's diff
// page, when the web view is on and the channel is not one every member
// of the server can read (a thread is judged by its parent, which a
// private thread's readers are a part of); else a note for the reply's
// text ("" with the view off).
func (r *Router) diffLink(ctx context.Context, ev chat.CommandEvent, tg target) (chat.Button, string) {
	if r.opt.Web == nil {
		return chat.Button{}, ""
	}
	ch := ev.ChannelID
	if ev.ParentID != "" {
		ch = ev.ParentID
	}
	public, err := r.opt.Replier.EveryoneCanView(ctx, tg.rt.server.Name, ch)
	return weblink.Diff(r.opt.Web, tg.key, public, err)
}
