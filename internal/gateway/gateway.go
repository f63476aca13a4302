// Package gateway holds ccbridge's Discord gateway connections: one
// discordgo websocket per configured bot, with the intents the bridge needs,
// reconnects and resumes (discordgo's), slash command registration, and the
// translation of discordgo events into chat events for the router.
package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

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
	// HandleAutocomplete suggests values for an option being typed into;
	// the gateway answers with them at once.
	HandleAutocomplete(ev chat.AutocompleteEvent) []chat.Choice
	HandleThreadArchived(server, threadID, parentID string)
	// HandleThreadDeleted is called for a thread deleted in Discord.
	HandleThreadDeleted(server, threadID, parentID string)
	// HandleChannelDeleted is called for a channel (not a thread)
	// deleted in Discord.
	HandleChannelDeleted(server, channelID string)
}

// Bot is one connected bot.
type Bot struct {
	Server  config.Server
	Session *discordgo.Session
	log     *slog.Logger
	serial  serial
	closing atomic.Bool // Close was called: a disconnect now is no loss
}

// serial runs the work of each channel (or thread) one item after another,
// in the order it was queued, each channel in a goroutine of its own.
//
// Why: discordgo runs every handler in a goroutine of its own unless
// SyncEvents is set, so two messages of a channel arriving back to back
// reached the router in either order. With SyncEvents the handlers run on
// the websocket's read loop in the order Discord sent the events, which is
// the order it created them; but a handler there must not block (a REST
// call to find a thread's parent, or a session stop on archive, would hold
// up heartbeats and every other channel). So the read loop only queues the
// event here, keyed by its channel, and the slow part runs beside it, still
// in order within the channel. Interactions are independent and each runs
// in a goroutine of its own.
type serial struct {
	mu     sync.Mutex
	queues map[string][]func() // present while a goroutine drains it
}

// run queues fn behind the channel's earlier work.
func (s *serial) run(channel string, fn func()) {
	s.mu.Lock()
	if s.queues == nil {
		s.queues = map[string][]func(){}
	}
	q, draining := s.queues[channel]
	s.queues[channel] = append(q, fn)
	s.mu.Unlock()
	if !draining {
		go s.drain(channel)
	}
}

func (s *serial) drain(channel string) {
	for {
		s.mu.Lock()
		q := s.queues[channel]
		if len(q) == 0 {
			delete(s.queues, channel)
			s.mu.Unlock()
			return
		}
		fn := q[0]
		q[0] = nil
		s.queues[channel] = q[1:]
		s.mu.Unlock()
		fn()
	}
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
	// Handlers run in the order Discord sent the events; each of ours is
	// cheap and hands slow work to b.serial or a goroutine (see serial).
	dg.SyncEvents = true
	log = log.With("server", srv.Name)
	b := &Bot{Server: srv, Session: dg, log: log}
	dg.AddHandler(func(s *discordgo.Session, r *discordgo.Ready) {
		log.Info("gateway ready", "bot", r.User.Username, "guilds", len(r.Guilds))
		b.catchUp(h) // catchup.go
		go b.registerCommands(r.Application.ID, commands)
	})
	dg.AddHandler(func(_ *discordgo.Session, _ *discordgo.Resumed) { log.Info("gateway resumed") })
	dg.AddHandler(func(_ *discordgo.Session, _ *discordgo.Disconnect) {
		if !b.closing.Load() {
			log.Warn("gateway disconnected; reconnecting")
		}
	})
	dg.AddHandler(func(_ *discordgo.Session, g *discordgo.GuildCreate) {
		if g.ID != srv.GuildID {
			log.Warn("bot is in a guild that is not configured; ignoring it", "guild", g.ID)
			return
		}
		log.Info("guild available", "guild", g.ID, "name", g.Name, "channels", len(g.Channels))
		b.catchUpThreads(h, g.Threads) // catchup.go
	})
	dg.AddHandler(func(s *discordgo.Session, m *discordgo.MessageCreate) {
		if m.Author == nil || (s.State.User != nil && m.Author.ID == s.State.User.ID) || m.GuildID != b.Server.GuildID {
			return
		}
		b.serial.run(m.ChannelID, func() { b.onMessage(s, m, h) })
	})
	dg.AddHandler(func(_ *discordgo.Session, t *discordgo.ThreadUpdate) {
		wasArchived := t.BeforeUpdate != nil && t.BeforeUpdate.ThreadMetadata != nil && t.BeforeUpdate.ThreadMetadata.Archived
		if t.GuildID == srv.GuildID && t.ThreadMetadata != nil && t.ThreadMetadata.Archived && !wasArchived {
			id, parent := t.ID, t.ParentID
			b.serial.run(id, func() { h.HandleThreadArchived(srv.Name, id, parent) })
		}
	})
	dg.AddHandler(func(_ *discordgo.Session, t *discordgo.ThreadDelete) {
		if t.Channel != nil && t.GuildID == srv.GuildID {
			id, parent := t.ID, t.ParentID
			b.serial.run(id, func() { h.HandleThreadDeleted(srv.Name, id, parent) })
		}
	})
	dg.AddHandler(func(_ *discordgo.Session, c *discordgo.ChannelDelete) {
		if c.Channel != nil && c.GuildID == srv.GuildID && !c.IsThread() {
			id := c.ID
			b.serial.run(id, func() { h.HandleChannelDeleted(srv.Name, id) })
		}
	})
	// Interactions are read from the raw event, which holds the payload's
	// channel (with a thread's parent_id) that discordgo v0.29 drops.
	dg.AddHandler(func(s *discordgo.Session, e *discordgo.Event) {
		if i, ok := e.Struct.(*discordgo.InteractionCreate); ok && e.Type == "INTERACTION_CREATE" {
			parent, known := payloadParent(e.RawData)
			go b.onInteraction(s, i, parent, known, h)
		}
	})
	log.Info("connecting to Discord", "api", apiBase)
	if err := checkStarts(ctx, dg); err != nil { // connect.go
		return nil, fmt.Errorf("server %s: connect: %w", srv.Name, err)
	}
	if err := openCtx(ctx, dg); err != nil {
		if discord.DisallowedIntents(err) {
			return nil, fmt.Errorf("server %s: %w", srv.Name, &discord.IntentError{AppID: appID(ctx, apiBase, token), Err: err})
		}
		return nil, fmt.Errorf("server %s: connect: %w", srv.Name, err)
	}
	return b, nil
}

// openCtx runs dg.Open, giving up when ctx ends.
// appID asks Discord for the bot's application id, for the link to its
// settings; "" when Discord does not say in a few seconds.
func appID(ctx context.Context, apiBase, token string) string {
	c, err := discord.NewClient(apiBase, token)
	if err != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	app, err := c.Application(ctx)
	if err != nil {
		return ""
	}
	return app.ID
}

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
	b.closing.Store(true)
	// discordgo's heartbeat can fail on the closing socket and reconnect
	// after Close returned; a stopped bot must stay stopped.
	b.Session.ShouldReconnectOnError = false
	if err := b.Session.Close(); err != nil {
		return fmt.Errorf("server %s: close: %w", b.Server.Name, err)
	}
	return nil
}

// registerCommands makes the guild's slash commands include ours, writing
// only those missing or different: several daemons (one per machine) share
// a bot and register the same set, so a bulk overwrite by one would delete
// what another added, and every restart would rewrite them all. Commands
// that are not ours are left alone.
func (b *Bot) registerCommands(appID string, specs []chat.CommandSpec) {
	have, err := b.Session.ApplicationCommands(appID, b.Server.GuildID)
	if err != nil {
		b.log.Error("could not read the slash commands", "err", err)
		return
	}
	byName := map[string]*discordgo.ApplicationCommand{}
	for _, c := range have {
		if c.Type == 0 || c.Type == discordgo.ChatApplicationCommand {
			byName[c.Name] = c
		}
	}
	var all, differ []*discordgo.ApplicationCommand
	ours := map[string]bool{}
	for _, spec := range specs {
		want := commandOf(spec)
		all, ours[spec.Name] = append(all, want), true
		if cur, ok := byName[spec.Name]; !ok || !sameCommand(cur, want) {
			differ = append(differ, want)
		}
	}
	foreign := false
	for _, c := range have {
		foreign = foreign || !ours[c.Name]
	}
	written := 0
	switch {
	case len(differ) == 0:
	case !foreign:
		// Only ours are there: one overwrite puts the whole set in place
		// at once and deletes nothing.
		if _, err := b.Session.ApplicationCommandBulkOverwrite(appID, b.Server.GuildID, all); err != nil {
			b.log.Error("could not register slash commands", "err", err)
			return
		}
		written = len(differ)
	default:
		for _, want := range differ {
			if _, err := b.Session.ApplicationCommandCreate(appID, b.Server.GuildID, want); err != nil {
				b.log.Error("could not register a slash command", "command", want.Name, "err", err)
				continue
			}
			written++
		}
	}
	b.log.Info("slash commands registered", "count", len(specs), "written", written)
}

func commandOf(spec chat.CommandSpec) *discordgo.ApplicationCommand {
	perms := discord.CommandPermissions
	c := &discordgo.ApplicationCommand{Name: spec.Name, Description: spec.Description, Type: discordgo.ChatApplicationCommand,
		DefaultMemberPermissions: &perms}
	for _, o := range spec.Options {
		opt := &discordgo.ApplicationCommandOption{Type: discordgo.ApplicationCommandOptionString, Name: o.Name, Description: o.Description,
			Required: o.Required, MaxLength: o.MaxLength, Autocomplete: o.Autocomplete}
		if o.Integer {
			lo := float64(o.MinValue)
			opt.Type, opt.MinValue, opt.MaxValue = discordgo.ApplicationCommandOptionInteger, &lo, float64(o.MaxValue)
		}
		for _, ch := range o.Choices {
			opt.Choices = append(opt.Choices, &discordgo.ApplicationCommandOptionChoice{Name: ch.Name, Value: ch.Value})
		}
		c.Options = append(c.Options, opt)
	}
	return c
}

// sameCommand compares what ccbridge sets of a command.
func sameCommand(a, b *discordgo.ApplicationCommand) bool {
	if a.Name != b.Name || a.Description != b.Description || len(a.Options) != len(b.Options) ||
		(a.DefaultMemberPermissions == nil) != (b.DefaultMemberPermissions == nil) ||
		(a.DefaultMemberPermissions != nil && *a.DefaultMemberPermissions != *b.DefaultMemberPermissions) {
		return false
	}
	for i, x := range a.Options {
		y := b.Options[i]
		if x.Type != y.Type || x.Name != y.Name || x.Description != y.Description || x.Required != y.Required ||
			x.MaxLength != y.MaxLength || x.Autocomplete != y.Autocomplete || x.MaxValue != y.MaxValue ||
			(x.MinValue == nil) != (y.MinValue == nil) || (x.MinValue != nil && *x.MinValue != *y.MinValue) ||
			len(x.Choices) != len(y.Choices) {
			return false
		}
		for j, c := range x.Choices {
			if c.Name != y.Choices[j].Name || fmt.Sprint(c.Value) != fmt.Sprint(y.Choices[j].Value) {
				return false
			}
		}
	}
	return true
}

func (b *Bot) onMessage(s *discordgo.Session, m *discordgo.MessageCreate, h Handler) {
	ev := discord.MessageEvent(m.Message) // the same as catch-up reads back
	ev.Server = b.Server.Name
	ev.ParentID, ev.ThreadName = parentOf(s, m.ChannelID)
	h.HandleMessage(ev)
}

// onInteraction hands an interaction to the router without a REST call
// first: Discord allows 3 s for the first answer, so a thread's parent comes
// from the payload or the state cache, never from a fetch.
func (b *Bot) onInteraction(s *discordgo.Session, i *discordgo.InteractionCreate, parent string, parentKnown bool, h Handler) {
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
		ev.ParentID = parent
		if !parentKnown {
			ev.ParentID = cachedParent(s, i.ChannelID)
		}
		for _, o := range data.Options {
			ev.Options[o.Name] = fmt.Sprint(o.Value)
		}
		h.HandleCommand(ev, resp)
	case discordgo.InteractionApplicationCommandAutocomplete:
		b.autocomplete(s, i, user, parent, parentKnown, h)
	case discordgo.InteractionMessageComponent:
		data := i.MessageComponentData()
		ev := chat.ComponentEvent{Server: b.Server.Name, ChannelID: i.ChannelID, User: user, CustomID: data.CustomID, Values: data.Values}
		if i.Message != nil {
			ev.MessageID, ev.Content, ev.Rows, ev.FileIDs = i.Message.ID, drawn(i), rowsOf(i.Message), fileIDs(i.Message)
		}
		h.HandleComponent(ev, resp)
	case discordgo.InteractionModalSubmit:
		if i.Data == nil {
			return // a modal component discordgo v0.29 cannot decode
		}
		data := i.ModalSubmitData()
		ev := chat.ModalEvent{Server: b.Server.Name, ChannelID: i.ChannelID, User: user, CustomID: data.CustomID, Values: map[string]string{}}
		if i.Message != nil {
			ev.MessageID, ev.Content, ev.Rows, ev.FileIDs = i.Message.ID, drawn(i), rowsOf(i.Message), fileIDs(i.Message)
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

// drawn is the content of the message an interaction came from as the
// core drew it: the jump links of its message references (discord.Refs)
// are references again, so that its face compares with the one bound.
func drawn(i *discordgo.InteractionCreate) string {
	return discord.Unrefs(i.GuildID, i.Message.Content)
}

// rowsOf reads a message's components back into chat rows, for comparing
// what a message shows with what ccbridge drew (chat.Face). What ccbridge
// never draws (embeds, other kinds of component) becomes a row no drawing
// has, so such a message never passes for one of ccbridge's.
func rowsOf(m *discordgo.Message) []chat.Row {
	var rows []chat.Row
	foreign := func(what string) { rows = append(rows, chat.Row{Buttons: []chat.Button{{Label: "\x00" + what}}}) }
	for range m.Embeds {
		foreign("embed")
	}
	for _, c := range m.Components {
		ar, ok := c.(*discordgo.ActionsRow)
		if !ok {
			foreign(fmt.Sprint("component ", c.Type()))
			continue
		}
		var row chat.Row
		for _, in := range ar.Components {
			switch x := in.(type) {
			case *discordgo.Button:
				row.Buttons = append(row.Buttons, chat.Button{Label: x.Label, CustomID: x.CustomID, Style: chat.ButtonStyle(x.Style), Disabled: x.Disabled, URL: x.URL})
			case *discordgo.SelectMenu:
				sel := &chat.Select{CustomID: x.CustomID, Placeholder: x.Placeholder}
				for _, o := range x.Options {
					sel.Options = append(sel.Options, chat.Option{Label: o.Label, Value: o.Value, Description: o.Description, Default: o.Default})
				}
				row.Select = sel
			default:
				row.Buttons = append(row.Buttons, chat.Button{Label: fmt.Sprint("\x00component ", in.Type())})
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// autocomplete answers a person typing into an option that suggests
// values: at once (Discord waits 3 s), with at most chat.MaxChoices
// suggestions, unless the handler says the channel is not this daemon's.
func (b *Bot) autocomplete(s *discordgo.Session, i *discordgo.InteractionCreate, user chat.User, parent string, parentKnown bool, h Handler) {
	data := i.ApplicationCommandData()
	ev := chat.AutocompleteEvent{Server: b.Server.Name, ChannelID: i.ChannelID, ParentID: parent, User: user, Command: data.Name, Options: map[string]string{}}
	if !parentKnown {
		ev.ParentID = cachedParent(s, i.ChannelID)
	}
	for _, o := range data.Options {
		if o.Focused {
			ev.Option, ev.Value = o.Name, fmt.Sprint(o.Value)
			continue
		}
		ev.Options[o.Name] = fmt.Sprint(o.Value)
	}
	suggested := h.HandleAutocomplete(ev)
	if suggested == nil {
		return // another machine sharing the bot answers
	}
	choices := []*discordgo.ApplicationCommandOptionChoice{} // an empty list, never null: "no suggestions"
	for _, c := range suggested[:min(len(suggested), chat.MaxChoices)] {
		choices = append(choices, &discordgo.ApplicationCommandOptionChoice{Name: c.Name, Value: c.Value})
	}
	err := s.InteractionRespond(i.Interaction, &discordgo.InteractionResponse{Type: discordgo.InteractionApplicationCommandAutocompleteResult,
		Data: &discordgo.InteractionResponseData{Choices: choices}})
	if err != nil {
		b.log.Warn("could not answer an autocomplete", "command", data.Name, "err", err)
	}
}

// fileIDs are the ids of a message's attachments.
func fileIDs(m *discordgo.Message) []string {
	var ids []string
	for _, a := range m.Attachments {
		ids = append(ids, a.ID)
	}
	return ids
}

// payloadParent reads the channel object of an interaction payload: the
// thread's parent_id ("" for a channel that is not a thread), and whether
// the payload said.
func payloadParent(raw json.RawMessage) (string, bool) {
	var p struct {
		Channel *struct {
			Type     discordgo.ChannelType `json:"type"`
			ParentID string                `json:"parent_id"`
		} `json:"channel"`
	}
	if json.Unmarshal(raw, &p) != nil || p.Channel == nil {
		return "", false
	}
	switch p.Channel.Type {
	case discordgo.ChannelTypeGuildPublicThread, discordgo.ChannelTypeGuildPrivateThread, discordgo.ChannelTypeGuildNewsThread:
		return p.Channel.ParentID, true
	}
	return "", true
}

// cachedParent is parentOf without the fetch: "" when the cache does not
// know the channel.
func cachedParent(s *discordgo.Session, channelID string) string {
	if ch, err := s.State.Channel(channelID); err == nil && ch.IsThread() {
		return ch.ParentID
	}
	return ""
}

// parentOf returns a thread's parent channel and name ("" for a channel
// that is not a thread). A thread missing from the state cache (archived,
// or older than this connection) is fetched once and cached.
func parentOf(s *discordgo.Session, channelID string) (parent, name string) {
	ch, err := s.State.Channel(channelID)
	if err != nil {
		if ch, err = s.Channel(channelID); err != nil {
			return "", ""
		}
		_ = s.State.ChannelAdd(ch)
	}
	if ch.IsThread() {
		return ch.ParentID, ch.Name
	}
	return "", ""
}
