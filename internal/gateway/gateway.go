// Package gateway holds ccbridge's Discord gateway connections: one
// discordgo websocket per configured bot, with the intents the bridge needs,
// reconnects and resumes (discordgo's), and logs of what it is doing.
package gateway

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/bwmarrin/discordgo"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/discord"
)

// Intents the bridge needs. Message Content is privileged: it must be enabled
// for the bot in the developer portal, or Discord closes the socket (4014).
const Intents = discordgo.IntentsGuilds | discordgo.IntentsGuildMessages | discordgo.IntentsMessageContent

// Bot is one connected bot.
type Bot struct {
	Server  config.Server
	Session *discordgo.Session
	log     *slog.Logger
}

// Open connects one bot and returns once Discord has accepted it (READY).
func Open(ctx context.Context, log *slog.Logger, apiBase string, srv config.Server) (*Bot, error) {
	token, err := srv.ResolveToken()
	if err != nil {
		return nil, fmt.Errorf("server %s: %w", srv.Name, err)
	}
	dg, err := discord.NewSession(apiBase, token)
	if err != nil {
		return nil, fmt.Errorf("server %s: %w", srv.Name, err)
	}
	dg.Identify.Intents = Intents
	log = log.With("server", srv.Name)
	b := &Bot{Server: srv, Session: dg, log: log}
	dg.AddHandler(func(_ *discordgo.Session, r *discordgo.Ready) {
		log.Info("gateway ready", "bot", r.User.Username, "guilds", len(r.Guilds))
	})
	dg.AddHandler(func(_ *discordgo.Session, _ *discordgo.Resumed) { log.Info("gateway resumed") })
	dg.AddHandler(func(_ *discordgo.Session, _ *discordgo.Disconnect) { log.Warn("gateway disconnected; reconnecting") })
	dg.AddHandler(func(_ *discordgo.Session, g *discordgo.GuildCreate) {
		if g.ID != srv.GuildID {
			log.Warn("bot is in a guild that is not configured; ignoring it", "guild", g.ID)
			return
		}
		log.Info("guild available", "guild", g.ID, "name", g.Name, "channels", len(g.Channels))
	})
	log.Info("connecting to Discord", "api", apiBase)
	if err := openCtx(ctx, dg); err != nil {
		return nil, fmt.Errorf("server %s: connect: %w", srv.Name, err)
	}
	return b, nil
}

// openCtx runs dg.Open, giving up when ctx ends.
func openCtx(ctx context.Context, dg *discordgo.Session) error {
	done := make(chan error, 1)
	go func() { done <- dg.Open() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		go func() { <-done; _ = dg.Close() }()
		return ctx.Err()
	}
}

// Close disconnects the bot.
func (b *Bot) Close() error {
	if err := b.Session.Close(); err != nil {
		return fmt.Errorf("server %s: close: %w", b.Server.Name, err)
	}
	return nil
}
