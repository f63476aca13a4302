// Package weblink is what the chat front ends say and offer about the web
// view: /web's private answer with the link of a session or of a server's
// index, revoking every link, and /diff's Open in browser where only the
// owners read. Each link is a capability, valid until it expires or is
// revoked, for whoever holds it: links go only where the owners alone read
// them (an ephemeral answer, a channel every member cannot read). It knows
// no front end and no web server: the links come through Links.
package weblink

import (
	"context"
	"fmt"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/redact"
)

// Links makes links to the web view: read-only pages of one session (its
// conversation, diff and files) or of a server's index of sessions. The
// daemon's adapter is web.Links.
type Links interface {
	SessionLink(key string) (url string, expires time.Time)
	DiffLink(key string) (url string, expires time.Time)
	IndexLink(server string) (url string, expires time.Time)
	// Revoke ends every link made so far.
	Revoke(ctx context.Context) error
}

// Down is the Links of a web view that was turned on but could not start
// (its address in use, a bad certificate): it makes no link, and /web says
// why instead of calling the view off.
type Down struct{ Err error }

func (Down) SessionLink(string) (string, time.Time) { return "", time.Time{} }
func (Down) DiffLink(string) (string, time.Time)    { return "", time.Time{} }
func (Down) IndexLink(string) (string, time.Time)   { return "", time.Time{} }

// Revoke has nothing to end: no link was given.
func (d Down) Revoke(context.Context) error { return d.reason() }

func (d Down) reason() error { return fmt.Errorf("the web view could not start: %w", d.Err) }

// Name is /web's.
const Name = "web"

// RevokeAll is the value of /web's revoke option.
const RevokeAll = "all"

// Command is /web.
var Command = chat.CommandSpec{Name: Name, Description: "Open this session in the browser (a private link)", Options: []chat.OptionSpec{
	{Name: "revoke", Description: "end every link ccbridge has given", Choices: []chat.Choice{{Name: "all: every link stops working", Value: RevokeAll}}}}}

// What /web and the links' places say.
const (
	Off = "🌐 The web view is off: `listen` in the config's `[web]` table is \"off\". " +
		"Set `listen` (by default 127.0.0.1:7878, this machine only) and restart ccbridge."
	// notStarted is /web's answer when the view could not start; %s is why.
	notStarted = "⚠️ The web view is on but could not start when ccbridge started: %s. " +
		"Free its address or fix `[web]` in the config (`listen`, the certificate), then restart ccbridge."
	Revoked    = "🔒 Every web link ccbridge has given is revoked: each one now gets \"forbidden\". `/web` makes a new one."
	NotHere    = "\n🌐 The browser view is not linked here, where others can read it: `/web` gives you its link privately."
	NoLink     = "⚠️ Could not make a link this time; run `/web` again."
	BadOption  = "⚠️ `revoke` takes `all`."
	buttonText = "Open in browser"
)

// Place is what a /web asks the link of: a session (Key; ThreadID when
// it is a thread's, Label naming a project channel's), or with no Key the
// index of Server's sessions (the panel channel).
type Place struct {
	Server, Key, ThreadID, Label string
}

// Reply is /web's private answer: the link of p, until it expires.
func Reply(l Links, p Place) chat.Reply {
	if d, ok := l.(Down); ok {
		return chat.Reply{Content: fmt.Sprintf(notStarted, chat.ErrText(d.Err)), Ephemeral: true}
	}
	var what, url string
	var expires time.Time
	switch {
	case p.Key == "":
		what = "This server's sessions"
		url, expires = l.IndexLink(p.Server)
	case p.ThreadID != "":
		what = "This thread's session"
		url, expires = l.SessionLink(p.Key)
	default:
		what = "**" + p.Label + "**"
		url, expires = l.SessionLink(p.Key)
	}
	b, ok := Button(buttonText, url)
	if !ok {
		return chat.Reply{Content: NoLink, Ephemeral: true}
	}
	at := expires.Unix()
	return chat.Reply{Content: fmt.Sprintf("🌐 %s in the browser, read-only and live. The link works until <t:%d:f> (<t:%d:R>) for whoever holds it: "+
		"keep it to yourself. `/web revoke:all` ends every link.", what, at, at), Rows: []chat.Row{{Buttons: []chat.Button{b}}}, Ephemeral: true}
}

// Diff is /diff's Open in browser button for session key's diff page,
// only where the channel is not one every member of the server can read
// (public, or unknown: checkErr); else a note for the reply's text. A view
// that could not start offers nothing.
func Diff(l Links, key string, public bool, checkErr error) (chat.Button, string) {
	if _, down := l.(Down); down {
		return chat.Button{}, ""
	}
	if checkErr != nil || public {
		return chat.Button{}, NotHere
	}
	url, _ := l.DiffLink(key)
	if b, ok := Button(buttonText, url); ok {
		return b, ""
	}
	return chat.Button{}, ""
}

// Button is a link button to url, unless url is not one to post: not
// http(s), too long, or changed by the redaction every post passes (a
// token that happens to look like a secret would no longer open).
func Button(label, url string) (chat.Button, bool) {
	b := chat.Button{Label: label, URL: url}
	if url == "" || redact.String(url) != url || chat.CheckMessage(chat.Message{Rows: []chat.Row{{Buttons: []chat.Button{b}}}}) != nil {
		return chat.Button{}, false
	}
	return b, true
}
