package daemon

import (
	"context"
	"fmt"

	"github.com/ccbridge/ccbridge/internal/discord"
	"github.com/ccbridge/ccbridge/internal/gateway"
	"github.com/ccbridge/ccbridge/internal/intake"
	"github.com/ccbridge/ccbridge/internal/router"
	"github.com/ccbridge/ccbridge/internal/telegram"
)

// The router reads back what its bots missed (see gateway.Catcher).
var _ gateway.Catcher = (*router.Router)(nil)

// history reads channels back for the router's catch-up, as the right bot:
// reading history is Discord's alone (chat.Poster only posts).
type history struct {
	posters  map[string]*discord.Poster
	telegram map[string]*telegram.Poster // their journals (telegram.go)
}

func (h history) poster(server string) (*discord.Poster, error) {
	p, ok := h.posters[server]
	if !ok {
		return nil, fmt.Errorf("no bot for server %q", server)
	}
	return p, nil
}

func (h history) After(ctx context.Context, server, channelID, afterID string) ([]router.Missed, error) {
	if tp, ok := h.telegram[server]; ok {
		return telegramHistory(ctx, tp, server, channelID, afterID)
	}
	p, err := h.poster(server)
	if err != nil {
		return nil, err
	}
	ms, err := p.After(ctx, channelID, afterID)
	if err != nil {
		return nil, err
	}
	out := make([]router.Missed, 0, len(ms))
	for _, m := range ms {
		out = append(out, router.Missed(m))
	}
	return out, nil
}

func (h history) Message(ctx context.Context, server, channelID, messageID string) (router.Missed, error) {
	if tp, ok := h.telegram[server]; ok {
		m, err := tp.Journal().Message(ctx, server, channelID, messageID) // intake.ErrGone when not kept
		return router.Missed(m), err
	}
	p, err := h.poster(server)
	if err != nil {
		return router.Missed{}, err
	}
	m, err := p.MissedMessage(ctx, channelID, messageID)
	if discord.IsUnknownMessage(err) || discord.IsUnknownChannel(err) {
		err = fmt.Errorf("%w: %w", intake.ErrGone, err)
	}
	return router.Missed(m), err
}
