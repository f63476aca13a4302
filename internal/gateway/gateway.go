// Package gateway holds ccbridge's Discord gateway connections: one
// discordgo websocket per configured bot, with the intents the bridge needs,
// reconnects and resumes (discordgo's), slash command registration, and the
// translation of discordgo events into chat events for the router.
package gateway

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/bwmarrin/discordgo"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/discord"
)

// Intents the bridge needs. Message Content is privileged: it must be enabled
// for the bot in the developer portal, or Discord closes the socket (4014).
const Intents = discordgo.IntentsGuilds | discordgo.IntentsGuildMessages | discordgo.IntentsMessageContent

// Handler receives the events of every bot.
type Handler interface {
	HandleMessage(ev chat.MessageEvent)
	HandleCommand(ev chat.CommandEvent, resp chat.Responder)
	HandleComponent(ev chat.ComponentEvent, resp chat.Responder)
	HandleModal(ev chat.ModalEvent, resp chat.Responder)
	HandleThreadArchived(server, threadID, parentID string)
}

// Bot is one connected bot.
type Bot struct {
	Server  config.Server
	Session *discordgo.Session
	log     *slog.Logger
}

// Open connects one bot and returns once Discord has accepted it (READY).
// Slash commands are registered in the bot's guild once it is ready.
func Open(ctx context.Context, log *slog.Logger, apiBase string, srv config.Server, h Handler, commands []chat.CommandSpec) (*Bot, error) {
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
	dg.AddHandler(func(s *discordgo.Session, r *discordgo.Ready) {
		log.Info("gateway ready", "bot", r.User.Username, "guilds", len(r.Guilds))
		go b.registerCommands(r.Application.ID, commands)
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
	dg.AddHandler(func(s *discordgo.Session, m *discordgo.MessageCreate) { b.onMessage(s, m, h) })
	dg.AddHandler(func(_ *discordgo.Session, t *discordgo.ThreadUpdate) {
		wasArchived := t.BeforeUpdate != nil && t.BeforeUpdate.ThreadMetadata != nil && t.BeforeUpdate.ThreadMetadata.Archived
		if t.GuildID == srv.GuildID && t.ThreadMetadata != nil && t.ThreadMetadata.Archived && !wasArchived {
			h.HandleThreadArchived(srv.Name, t.ID, t.ParentID)
		}
	})
	dg.AddHandler(func(s *discordgo.Session, i *discordgo.InteractionCreate) { b.onInteraction(s, i, h) })
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

func (b *Bot) registerCommands(appID string, specs []chat.CommandSpec) {
	var cmds []*discordgo.ApplicationCommand
	for _, spec := range specs {
		c := &discordgo.ApplicationCommand{Name: spec.Name, Description: spec.Description}
		for _, o := range spec.Options {
			opt := &discordgo.ApplicationCommandOption{Type: discordgo.ApplicationCommandOptionString, Name: o.Name, Description: o.Description, Required: o.Required}
			for _, ch := range o.Choices {
				opt.Choices = append(opt.Choices, &discordgo.ApplicationCommandOptionChoice{Name: ch, Value: ch})
			}
			c.Options = append(c.Options, opt)
		}
		cmds = append(cmds, c)
	}
	if _, err := b.Session.ApplicationCommandBulkOverwrite(appID, b.Server.GuildID, cmds); err != nil {
		b.log.Error("could not register slash commands", "err", err)
		return
	}
	b.log.Info("slash commands registered", "count", len(cmds))
}

func (b *Bot) onMessage(s *discordgo.Session, m *discordgo.MessageCreate, h Handler) {
	if m.Author == nil || (s.State.User != nil && m.Author.ID == s.State.User.ID) || m.GuildID != b.Server.GuildID {
		return
	}
	ev := chat.MessageEvent{Server: b.Server.Name, ChannelID: m.ChannelID, MessageID: m.ID, Content: m.Content,
		Author: chat.User{ID: m.Author.ID, Name: m.Author.Username, Bot: m.Author.Bot}}
	ev.ParentID = parentOf(s, m.ChannelID)
	for _, a := range m.Attachments {
		ev.Attachments = append(ev.Attachments, chat.Attachment{Name: a.Filename, URL: a.URL, Size: a.Size})
	}
	h.HandleMessage(ev)
}

func (b *Bot) onInteraction(s *discordgo.Session, i *discordgo.InteractionCreate, h Handler) {
	if i.GuildID != b.Server.GuildID {
		return
	}
	var u *discordgo.User
	if i.Member != nil && i.Member.User != nil {
		u = i.Member.User
	} else {
		u = i.User
	}
	if u == nil {
		return
	}
	user := chat.User{ID: u.ID, Name: u.Username, Bot: u.Bot}
	resp := &responder{s: s, i: i.Interaction}
	switch i.Type {
	case discordgo.InteractionApplicationCommand:
		data := i.ApplicationCommandData()
		ev := chat.CommandEvent{Server: b.Server.Name, ChannelID: i.ChannelID, User: user, Name: data.Name, Options: map[string]string{}}
		ev.ParentID = parentOf(s, i.ChannelID)
		for _, o := range data.Options {
			ev.Options[o.Name] = fmt.Sprint(o.Value)
		}
		h.HandleCommand(ev, resp)
	case discordgo.InteractionMessageComponent:
		data := i.MessageComponentData()
		ev := chat.ComponentEvent{Server: b.Server.Name, ChannelID: i.ChannelID, User: user, CustomID: data.CustomID, Values: data.Values}
		if i.Message != nil {
			ev.MessageID, ev.Content = i.Message.ID, i.Message.Content
		}
		h.HandleComponent(ev, resp)
	case discordgo.InteractionModalSubmit:
		if i.Data == nil {
			return // a modal component discordgo v0.29 cannot decode
		}
		data := i.ModalSubmitData()
		ev := chat.ModalEvent{Server: b.Server.Name, ChannelID: i.ChannelID, User: user, CustomID: data.CustomID, Values: map[string]string{}}
		if i.Message != nil {
			ev.MessageID = i.Message.ID
		}
		for _, c := range data.Components {
			row, ok := c.(*discordgo.ActionsRow)
			if !ok {
				continue
			}
			for _, inner := range row.Components {
				if in, ok := inner.(*discordgo.TextInput); ok {
					ev.Values[in.CustomID] = in.Value
				}
			}
		}
		h.HandleModal(ev, resp)
	}
}

// parentOf returns a thread's parent channel ("" for a channel that is not
// a thread). A thread missing from the state cache (archived, or older than
// this connection) is fetched once and cached.
func parentOf(s *discordgo.Session, channelID string) string {
	ch, err := s.State.Channel(channelID)
	if err != nil {
		if ch, err = s.Channel(channelID); err != nil {
			return ""
		}
		_ = s.State.ChannelAdd(ch)
	}
	if ch.IsThread() {
		return ch.ParentID
	}
	return ""
}
