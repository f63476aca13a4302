package web

import (
	"context"
	"time"
)

// Links is what the front ends ask of the web view (weblink.Links, mcp.Web):
// links to post, each with the moment it stops working, and revoking them
// all. The front ends do not import this package; the daemon hands them
// Links.
type Links struct{ H *Handler }

// SessionLink is a link to a session's pages.
func (l Links) SessionLink(key string) (string, time.Time) { return l.H.linkTo(SessionScope(key), "") }

// DiffLink is a link to a session's Diff page.
func (l Links) DiffLink(key string) (string, time.Time) { return l.H.linkTo(SessionScope(key), "diff") }

// IndexLink is a link to a server's index of sessions.
func (l Links) IndexLink(server string) (string, time.Time) {
	return l.H.linkTo(IndexScope(server), "")
}

// Revoke ends every link made so far (/web revoke).
func (l Links) Revoke(ctx context.Context) error { return l.H.Revoke(ctx) }

// linkTo is a link to page (relative to the scope's root) valid for the
// configured link_ttl, and its expiry as the token holds it: in whole
// seconds, so the time told is the moment the link is refused.
func (h *Handler) linkTo(scope Scope, page string) (string, time.Time) {
	expires := time.Unix(h.opt.Now().Add(h.linkTTL()).Unix(), 0)
	return h.baseURL() + h.pathFor(scope, expires) + page, expires
}
