package router

import (
	"context"
	"fmt"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/redact"
)

// Web makes links to the web view: read-only pages of one session (its
// conversation, diff and files) or of a server's index of sessions. Each
// link is a capability, valid until it expires or is revoked, for whoever
// holds it: links go only where the owners alone read them (an ephemeral
// answer, a channel every member cannot read). nil in Options: the view
// is off. The daemon's adapter is web.Links.
type Web interface {
	SessionLink(key string) (url string, expires time.Time)
	DiffLink(key string) (url string, expires time.Time)
	IndexLink(server string) (url string, expires time.Time)
	// Revoke ends every link made so far.
	Revoke(ctx context.Context) error
}

const webName = "web"

var webCommand = chat.CommandSpec{Name: webName, Description: "Open this session in the browser (a private link)", Options: []chat.OptionSpec{
	{Name: "revoke", Description: "end every link ccbridge has given", Choices: []chat.Choice{{Name: "all: every link stops working", Value: revokeAll}}}}}

const (
	webOff = "🌐 The web view is off: `listen` in the config's `[web]` table is \"off\", or its address was taken when ccbridge started " +
		"(the log says which). Set `listen` (by default 127.0.0.1:7878, this machine only) and restart ccbridge."
	webRevoked = "🔒 Every web link ccbridge has given is revoked: each one now gets \"forbidden\". `/web` makes a new one."
	webNotHere = "\n🌐 The browser view is not linked here, where others can read it: `/web` gives you its link privately."
	webNoLink  = "⚠️ Could not make a link this time; run `/web` again."
	linkLabel  = "Open in browser"
	revokeAll  = "all"
)

// runWeb answers /web, only ever to the owner who ran it: the link of the
// channel's session, or in the panel channel the server's index; or with
// revoke, ends every link.
func (r *Router) runWeb(ev chat.CommandEvent, tg target, resp chat.Responder) {
	if r.opt.Web == nil {
		_ = resp.Respond(chat.Reply{Content: webOff, Ephemeral: true})
		return
	}
	switch ev.Options["revoke"] {
	case "":
		_ = resp.Respond(r.webLinkReply(tg))
	case revokeAll:
		if err := resp.Defer(true); err != nil {
			return
		}
		reply := chat.Reply{Content: webRevoked, Ephemeral: true}
		if err := r.opt.Web.Revoke(r.ctx); err != nil {
			reply.Content = "⚠️ Could not revoke the links: " + chat.ErrText(err)
		} else {
			r.opt.Log.Info("every web link revoked", "user", ev.User.ID, "server", ev.Server)
		}
		if _, err := resp.Edit(reply); err != nil {
			r.opt.Log.Error("could not answer /web revoke", "err", err)
		}
	default:
		_ = resp.Respond(chat.Reply{Content: "⚠️ `revoke` takes `all`.", Ephemeral: true})
	}
}

// webLinkReply is the private answer carrying the link of tg's session,
// or of its server's index where tg has no session (the panel channel).
func (r *Router) webLinkReply(tg target) chat.Reply {
	var what, url string
	var expires time.Time
	switch {
	case tg.key == "":
		what = "This server's sessions"
		url, expires = r.opt.Web.IndexLink(tg.rt.server.Name)
	case tg.threadID != "":
		what = "This thread's session"
		url, expires = r.opt.Web.SessionLink(tg.key)
	default:
		what = "**" + tg.rt.label() + "**" // open.go
		url, expires = r.opt.Web.SessionLink(tg.key)
	}
	b, ok := linkButton(linkLabel, url)
	if !ok {
		return chat.Reply{Content: webNoLink, Ephemeral: true}
	}
	at := expires.Unix()
	return chat.Reply{Content: fmt.Sprintf("🌐 %s in the browser, read-only and live. The link works until <t:%d:f> (<t:%d:R>) for whoever holds it: "+
		"keep it to yourself. `/web revoke:all` ends every link.", what, at, at), Rows: []chat.Row{{Buttons: []chat.Button{b}}}, Ephemeral: true}
}

// panelWeb answers the panel's 🌐 button: the server's index, privately.
func (r *Router) panelWeb(ev chat.ComponentEvent, resp chat.Responder) {
	if r.opt.Web == nil {
		_ = resp.Respond(chat.Reply{Content: webOff, Ephemeral: true})
		return
	}
	_ = resp.Respond(r.webLinkReply(target{rt: route{server: config.Server{Name: ev.Server}}}))
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
	if public, err := r.opt.Replier.EveryoneCanView(ctx, tg.rt.server.Name, ch); err != nil || public {
		return chat.Button{}, webNotHere
	}
	url, _ := r.opt.Web.DiffLink(tg.key)
	if b, ok := linkButton(linkLabel, url); ok {
		return b, ""
	}
	return chat.Button{}, ""
}

// linkButton is a link button to url, unless url is not one to post: not
// http(s), too long, or changed by the redaction every post passes (a
// token that happens to look like a secret would no longer open).
func linkButton(label, url string) (chat.Button, bool) {
	b := chat.Button{Label: label, URL: url}
	if url == "" || redact.String(url) != url || chat.CheckMessage(chat.Message{Rows: []chat.Row{{Buttons: []chat.Button{b}}}}) != nil {
		return chat.Button{}, false
	}
	return b, true
}
