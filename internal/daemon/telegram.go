package daemon

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/router"
	"github.com/ccbridge/ccbridge/internal/telegram"
)

// telegramBots runs the bots of the config's Telegram servers: each long
// polls its updates and hands them to the core (the router), which
// answers through the same posters as for Discord.
type telegramBots struct {
	log     *slog.Logger
	posters map[string]*telegram.Poster  // by server
	report  func(server, problem string) // the panel's word on a bot that cannot run
	wg      sync.WaitGroup
}

// start runs every Telegram server's bot until ctx ends. A token
// Telegram refuses stops that bot alone, said in the log and the panel.
func (t *telegramBots) start(ctx context.Context, cfg *config.Config, rt *router.Router) {
	for _, srv := range cfg.Servers {
		p, ok := t.posters[srv.Name]
		if !ok {
			continue
		}
		chatID, _ := strconv.ParseInt(srv.ChatID, 10, 64) // checked by config check
		// Strangers are turned away at the door, as the config in use says
		// (a reload included): a multi-select's ticks never reach the core.
		isOwner := func(id string) bool { return rt.IsOwner(srv.Name, id) }
		bot := telegram.NewBot(p, rt, telegram.Options{Server: srv.Name, ChatID: chatID, IsOwner: isOwner, OwnerIDs: srv.OwnerIDs,
			Commands: router.Commands(), Log: t.log})
		t.wg.Go(func() {
			err := bot.Run(ctx)
			if errors.Is(err, chat.ErrAuth) {
				t.log.Error("Telegram refused the bot token: get a fresh one from @BotFather (/token) and put it where token_env or token_file says",
					"server", srv.Name)
				t.report(srv.Name, "Telegram refused the bot token")
			}
		})
	}
}

// wait waits for the bots to stop (their handlers included).
func (t *telegramBots) wait() { t.wg.Wait() }

// The router is what the Telegram bots hand their events to; it reads
// back what they missed and stops the sessions of thread topics closed.
var (
	_ telegram.Handler  = (*router.Router)(nil)
	_ telegram.Catcher  = (*router.Router)(nil)
	_ telegram.Archiver = (*router.Router)(nil)
)

// telegramHistory is catch-up's history of a Telegram server: its
// journal, since the Bot API keeps none.
func telegramHistory(ctx context.Context, p *telegram.Poster, server, channelID, afterID string) ([]router.Missed, error) {
	ms, err := p.Journal().After(ctx, server, channelID, afterID)
	if err != nil {
		return nil, err
	}
	out := make([]router.Missed, 0, len(ms))
	for _, m := range ms {
		out = append(out, router.Missed(m))
	}
	return out, nil
}
