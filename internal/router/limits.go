package router

import (
	"context"

	"github.com/ccbridge/ccbridge/internal/chat"
)

// A front end refuses a message over its limit (Discord: chat.Limit
// characters, 50035); for a deferred answer the edit fails and the person
// is left with "thinking…" for good. Replies are laid out to fit, text
// taken from elsewhere is bounded, and chat.Fit at the front end's limit
// is the last guard on all of it.

// limiter is a Replier that knows each server's front end's limit: the
// most characters one of its messages takes (0: not known).
type limiter interface{ Limit(server string) int }

// fitting is a Responder whose every answer fits its front end's limit.
type fitting struct {
	chat.Responder
	limit int
}

func (f fitting) Respond(m chat.Reply) error {
	m.Content = chat.Fit(m.Content, f.limit)
	return f.Responder.Respond(m)
}
func (f fitting) Edit(m chat.Reply) (string, error) {
	m.Content = chat.Fit(m.Content, f.limit)
	return f.Responder.Edit(m)
}
func (f fitting) Update(m chat.Message) (string, error) {
	m.Content = chat.Fit(m.Content, f.limit)
	return f.Responder.Update(m)
}

// fittingReplier is a Replier whose every post fits. Send needs no cut:
// it posts a long text in as many messages as it takes.
type fittingReplier struct{ Replier }

// limit is server's front end's limit; Discord's, the smallest, when the
// Replier does not say.
func (f fittingReplier) limit(server string) int {
	if l, ok := f.Replier.(limiter); ok {
		if n := l.Limit(server); n > 0 {
			return n
		}
	}
	return chat.Limit
}

func (f fittingReplier) Post(ctx context.Context, server, channelID string, m chat.Message) (string, error) {
	m.Content = chat.Fit(m.Content, f.limit(server))
	return f.Replier.Post(ctx, server, channelID, m)
}

func (f fittingReplier) PostCard(ctx context.Context, server, channelID string, m chat.Message) (string, []string, error) {
	m.Content = chat.Fit(m.Content, f.limit(server))
	return f.Replier.PostCard(ctx, server, channelID, m)
}

// fit makes resp's answers fit server's front end.
func (r *Router) fit(server string, resp chat.Responder) chat.Responder {
	limit := chat.Limit
	if f, ok := r.opt.Replier.(fittingReplier); ok {
		limit = f.limit(server)
	}
	return fitting{resp, limit}
}
