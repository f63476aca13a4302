package router

import (
	"context"

	"github.com/ccbridge/ccbridge/internal/chat"
)

// Discord refuses a message over chat.Limit characters (50035); for a
// deferred answer the edit fails and the person is left with "thinking…"
// for good. Replies are laid out to fit, text taken from elsewhere is
// bounded, and chat.Fit is the last guard on all of it.

// fitting is a Responder whose every answer fits.
type fitting struct{ chat.Responder }

func (f fitting) Respond(m chat.Reply) error {
	m.Content = chat.Fit(m.Content, chat.Limit)
	return f.Responder.Respond(m)
}
func (f fitting) Edit(m chat.Reply) (string, error) {
	m.Content = chat.Fit(m.Content, chat.Limit)
	return f.Responder.Edit(m)
}
func (f fitting) Update(m chat.Message) (string, error) {
	m.Content = chat.Fit(m.Content, chat.Limit)
	return f.Responder.Update(m)
}

// fittingReplier is a Replier whose every post fits. Send needs no cut:
// it posts a long text in as many messages as it takes.
type fittingReplier struct{ Replier }

func (f fittingReplier) Post(ctx context.Context, server, channelID string, m chat.Message) (string, error) {
	m.Content = chat.Fit(m.Content, chat.Limit)
	return f.Replier.Post(ctx, server, channelID, m)
}

func (f fittingReplier) PostCard(ctx context.Context, server, channelID string, m chat.Message) (string, []string, error) {
	m.Content = chat.Fit(m.Content, chat.Limit)
	return f.Replier.PostCard(ctx, server, channelID, m)
}
