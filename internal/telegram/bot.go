package telegram

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/state"
)

// Handler receives a bot's events: the core's (the router's) entry points
// that Telegram has an event for.
type Handler interface {
	// HandleMessage returns once the message is queued; its update is
	// confirmed to Telegram only then (see Bot).
	HandleMessage(ev chat.MessageEvent)
	HandleCommand(ev chat.CommandEvent, resp chat.Responder)
	HandleComponent(ev chat.ComponentEvent, resp chat.Responder)
	HandleModal(ev chat.ModalEvent, resp chat.Responder)
}

// Options configure a Bot.
type Options struct {
	Server string // the configured server (bot) name events carry
	ChatID int64  // the group it serves: updates from any other chat are ignored
	// IsOwner, when set, drops strangers at the door: their messages and
	// commands reach nobody and their clicks are answered with nothing.
	// Without it they reach the handler, which refuses them (the router
	// does, as for Discord).
	IsOwner func(userID string) bool
	// OwnerIDs are the owners whose private chats with the bot get the
	// command menu too (each once they have started the bot).
	OwnerIDs []string
	Commands []chat.CommandSpec // set as the chat's bot commands on start
	Log      *slog.Logger
	// PollTimeout is getUpdates' long-poll timeout (default 50 s).
	PollTimeout time.Duration
}

// Bot long-polls one bot's updates and hands them to the handler.
//
// Offsets: an update is confirmed (the next getUpdates offset) only once
// its handler has returned, and the offset is kept durably
// (state.TelegramOffset) before the next poll confirms it, so a restart
// neither loses an update whose handler had not returned (Telegram sends
// it again) nor hands over twice one it had. Messages are handled one
// after another in the order Telegram numbered them; commands, clicks and
// form answers each in a goroutine, as Discord interactions are.
type Bot struct {
	p     *Poster
	h     Handler
	o     Options
	log   *slog.Logger
	name  string // the bot's username, for /command@name
	specs map[string]chat.CommandSpec

	// started is when the bot began polling: a message sent before it
	// was sent while ccbridge was away.
	started time.Time

	mu    sync.Mutex
	forms map[string]*form // forms.go, by prompt
	// asking counts the form prompts being sent: an answer can come back
	// before its prompt's send returns, and must wait to find its form.
	asking int
	asked  *sync.Cond // on mu
	// ticked are the multi-select options ticked per message (chat#id):
	// two quick clicks each carry the message as it was before either
	// redraw, so the keyboard they show is not the truth.
	ticked map[string]map[string]bool
	// toggling keeps a message's redraws in the order of its toggles.
	toggling sync.Mutex
	wg       sync.WaitGroup
}

// NewBot returns the bot of p's server, handing events to h.
func NewBot(p *Poster, h Handler, o Options) *Bot {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.PollTimeout <= 0 {
		o.PollTimeout = 50 * time.Second
	}
	b := &Bot{p: p, h: h, o: o, log: o.Log.With("server", o.Server), specs: map[string]chat.CommandSpec{}, forms: map[string]*form{},
		ticked: map[string]map[string]bool{}}
	b.asked = sync.NewCond(&b.mu)
	for _, s := range o.Commands {
		if n, ok := CommandName(s.Name); ok {
			b.specs[n] = s
		}
	}
	return b
}

// allowedUpdates are the update kinds the bot asks for.
var allowedUpdates = []string{"message", "callback_query"}

// Pruning of the keyboards' records: a card may be answered days later,
// but not months.
const (
	drawnTTL   = 30 * 24 * time.Hour
	drawnMax   = 5000
	pruneEvery = 24 * time.Hour
)

// Start checks the token (getMe) and sets the chat's commands; Run calls
// it. An error matching chat.ErrAuth means Telegram refused the token.
func (b *Bot) Start(ctx context.Context) error {
	var me user
	if err := b.p.c.call(ctx, "getMe", map[string]any{}, &me, true); err != nil {
		return fmt.Errorf("server %s: %w", b.o.Server, err)
	}
	b.name = me.Username
	if len(b.o.Commands) > 0 {
		skipped, err := b.p.SetCommands(ctx, b.o.ChatID, b.o.Commands)
		if err != nil {
			b.log.Error("could not set the bot's commands", "err", err)
		}
		if len(skipped) > 0 {
			b.log.Warn("commands Telegram cannot take were left out", "commands", skipped)
		}
		for _, o := range b.o.OwnerIDs {
			if uid, err := strconv.ParseInt(o, 10, 64); err == nil && uid > 0 && b.owner(user{ID: uid}) {
				b.privateMenu(ctx, uid) // private.go
			}
		}
	}
	b.log.Info("telegram bot ready", "bot", me.Username)
	return nil
}

// Run starts the bot and polls until ctx ends; it returns early only when
// Telegram refuses the token. In-flight handlers are waited for.
func (b *Bot) Run(ctx context.Context) error {
	defer b.wg.Wait()
	for {
		err := b.Start(ctx)
		if err == nil {
			break
		}
		if errors.Is(err, chat.ErrAuth) || ctx.Err() != nil {
			return err
		}
		b.log.Warn("telegram not reachable; trying again", "err", err)
		if !sleep(ctx, 5*time.Second) {
			return ctx.Err()
		}
	}
	b.prune(ctx)
	lastPrune := time.Now()
	b.started = time.Now()
	b.catchUp()
	next := b.offset()
	backoff := time.Second
	for ctx.Err() == nil {
		ups, err := b.poll(ctx, next)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			if errors.Is(err, chat.ErrAuth) {
				return fmt.Errorf("server %s: %w", b.o.Server, err)
			}
			wait := backoff
			if ra := chat.RetryAfter(err); ra > 0 {
				wait = ra
			}
			b.log.Warn("getUpdates failed; polling again", "err", err, "in", wait)
			backoff = min(backoff*2, 30*time.Second)
			if !sleep(ctx, wait) {
				break
			}
			continue
		}
		backoff = time.Second
		for _, u := range ups {
			if u.UpdateID < next {
				continue // handed over before a restart
			}
			b.dispatch(ctx, u)
			next = u.UpdateID + 1
			b.keepOffset(next)
		}
		if time.Since(lastPrune) > pruneEvery {
			b.prune(ctx)
			lastPrune = time.Now()
		}
	}
	return ctx.Err()
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// poll is one getUpdates: offset confirms every update below it.
func (b *Bot) poll(ctx context.Context, offset int64) ([]update, error) {
	ctx, cancel := context.WithTimeout(ctx, b.o.PollTimeout+15*time.Second)
	defer cancel()
	params := map[string]any{"timeout": int(b.o.PollTimeout / time.Second), "allowed_updates": allowedUpdates}
	if offset > 0 {
		params["offset"] = offset
	}
	var ups []update
	if err := b.p.c.once(ctx, "getUpdates", params, &ups); err != nil {
		var ae *APIError
		if errors.As(err, &ae) && ae.Code == http.StatusConflict {
			b.log.Warn("another process polls this bot's updates: only one ccbridge may run a Telegram bot")
		}
		return nil, err
	}
	return ups, nil
}

// offset is the next update to ask for, as last kept.
func (b *Bot) offset() int64 {
	o, err := b.p.store.Offsets.Get(b.o.Server)
	if err != nil {
		return 0
	}
	return o.Next
}

// keepOffset records that every update below next was handed over.
func (b *Bot) keepOffset(next int64) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := b.p.store.Offsets.Update(ctx, b.o.Server, func(o *state.TelegramOffset) error {
		o.Next, o.Updated = max(o.Next, next), time.Now().UTC()
		return nil
	})
	if err != nil {
		b.log.Error("could not record the updates handled; a restart may hand some over again", "err", err)
	}
}

func (b *Bot) prune(ctx context.Context) {
	if n, err := b.p.store.Drawn.Prune(ctx, time.Now().Add(-drawnTTL), drawnMax); err != nil {
		b.log.Warn("could not prune the keyboards' records", "err", err)
	} else if n > 0 {
		b.log.Info("pruned the records of old keyboards", "count", n)
	}
	// A form's record is written once, when its prompt is asked.
	if _, err := b.p.store.Forms.Prune(ctx, time.Now().Add(-formTTL), 0); err != nil {
		b.log.Warn("could not prune the forms' records", "err", err)
	}
}

// stranger reports whether IsOwner turns u away.
func (b *Bot) stranger(u user) bool {
	return u.IsBot || (b.o.IsOwner != nil && !b.o.IsOwner(strconv.FormatInt(u.ID, 10)))
}

// dispatch hands one update over; a message's handler has returned when
// it returns.
func (b *Bot) dispatch(ctx context.Context, u update) {
	switch {
	case u.Message != nil:
		b.onMessage(ctx, u.Message)
	case u.CallbackQuery != nil:
		q := u.CallbackQuery
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			hctx, cancel := handlerCtx(ctx)
			defer cancel()
			b.onCallback(hctx, q)
		}()
	}
}

func (b *Bot) onMessage(ctx context.Context, m *inMessage) {
	switch {
	case m.Chat.Type == "private" && !b.privateThread(m): // private_topics.go
		b.onPrivate(ctx, m) // private.go
		return
	case m.Chat.Type != "private" && m.Chat.ID != b.o.ChatID:
		return
	}
	if m.ForumTopicClosed != nil || m.ForumTopicReopened != nil {
		b.onTopicClosed(ctx, m.place().ChannelID(), m.ForumTopicClosed != nil)
		return
	}
	if m.From == nil || !m.written() {
		return
	}
	if b.stranger(*m.From) {
		b.log.Info("ignored a message from someone who is not an owner", "user", m.From.ID)
		return
	}
	place := m.place()
	channelID := place.ChannelID()
	if f := b.formFor(m); f != nil { // forms.go
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			hctx, cancel := handlerCtx(ctx)
			defer cancel()
			b.answerForm(hctx, f, m)
		}()
		return
	}
	if b.answersGoneForm(m) {
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			hctx, cancel := handlerCtx(ctx)
			defer cancel()
			b.sayFormGone(hctx, m)
		}()
		return
	}
	parent, threadName := "", ""
	if t, ok := b.p.Topic(channelID); ok {
		parent, threadName = t.ParentID, t.Name
	}
	name, rest, isCommand, foreign := m.command(b.name)
	if foreign {
		return // another bot's
	}
	if isCommand {
		if spec, known := b.specs[name]; known {
			ev := chat.CommandEvent{Server: b.o.Server, ChannelID: channelID, ParentID: parent, User: m.From.chatUser(), Name: spec.Name,
				Options: commandOptions(spec, rest)}
			resp := &responder{b: b, place: place, replyTo: MessageID(m.Chat.ID, m.MessageID), user: ev.User}
			b.wg.Add(1)
			go func() {
				defer b.wg.Done()
				b.h.HandleCommand(ev, resp)
			}()
			return
		}
		// Not ccbridge's: Claude Code's own (/compact, …) goes to Claude.
	}
	atts, flags := m.attachments()
	content := m.Text
	if content == "" {
		content = m.Caption
	}
	ev := chat.MessageEvent{Server: b.o.Server, ChannelID: channelID, ParentID: parent, ThreadName: threadName,
		MessageID: MessageID(m.Chat.ID, m.MessageID), Type: chat.MessageDefault, Author: m.From.chatUser(), Content: content, Attachments: atts, Flags: flags}
	// Journaled before it is handed over: once its update is confirmed,
	// the journal is the only place catch-up finds it.
	jctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	err := b.p.Journal().record(jctx, ev, time.Unix(m.Date, 0))
	cancel()
	if err != nil {
		b.log.Error("could not journal a message; catch-up will not find it after a crash", "message", ev.MessageID, "err", err)
	}
	// A message not journaled is handed over as it is: catch-up would
	// not find it.
	if c, ok := b.h.(Catcher); ok && err == nil && time.Unix(m.Date, 0).Before(b.started.Truncate(time.Second)) {
		// Sent while ccbridge was away: Telegram kept it, and catch-up's
		// rules (its age, once) decide, as for what Discord's history holds.
		c.CatchUp(b.o.Server, channelID, parent)
		return
	}
	b.h.HandleMessage(ev)
}

// A click's or a form answer's calls to Telegram each get handlerTimeout,
// and end shutdownGrace after the bot is stopped: a Telegram that does not
// answer never holds the daemon's shutdown.
const (
	handlerTimeout = 2 * time.Minute
	shutdownGrace  = 5 * time.Second
)

// handlerCtx is the context of a handler started from the poll loop's ctx.
func handlerCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), handlerTimeout)
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(shutdownGrace, cancel) })
	return hctx, func() { stop(); cancel() }
}

// Archiver is a Handler that stops the session of a thread closed in the
// app (the core's HandleThreadArchived, as for an archived Discord thread).
type Archiver interface {
	HandleThreadArchived(server, threadID, parentID string)
}

// onTopicClosed records that a topic ccbridge opened was closed or
// reopened in the app, and has a closed one's session stopped. Only
// administrators close topics, as Manage Threads archives on Discord; a
// message in the topic once reopened resumes the session.
func (b *Bot) onTopicClosed(ctx context.Context, channelID string, closed bool) {
	t, ok := b.p.Topic(channelID)
	if !ok {
		return // a project's topic, or one ccbridge did not open
	}
	if err := b.p.markTopic(context.WithoutCancel(ctx), channelID, closed); err != nil {
		b.log.Warn("could not record a topic closed or reopened", "topic", channelID, "err", err)
	}
	if a, ok := b.h.(Archiver); ok && closed {
		b.log.Info("a thread's topic was closed; its session stops after its turn", "topic", channelID)
		a.HandleThreadArchived(b.o.Server, channelID, t.ParentID)
	}
}

// Catcher is a Handler that reads back what the bot missed (the core's
// catch-up, reading Journal): on start, before the first poll, the bot
// asks it which channels to read back and has each read, so what was
// journaled but not delivered before a restart goes ahead of what
// arrives next.
type Catcher interface {
	CatchUpChannels(server string) map[string]string // channel → parent
	CatchUp(server, channelID, parentID string)
}

// catchUp runs the handler's catch-up of every channel it names.
func (b *Bot) catchUp() {
	c, ok := b.h.(Catcher)
	if !ok {
		return
	}
	chans := c.CatchUpChannels(b.o.Server)
	if chans == nil {
		return // the core keeps no catch-up
	}
	// The topics ccbridge opened as threads, which the core names no
	// channel of: Telegram keeps no list of a group's topics.
	if topics, err := b.p.store.Topics.List(); err == nil {
		for _, t := range topics {
			if t.Server == b.o.Server && !t.Closed && t.ParentID != "" {
				chans[t.ChannelID] = t.ParentID
			}
		}
	}
	if len(chans) > 0 {
		b.log.Info("catching up on what was missed", "channels", len(chans))
	}
	for ch, parent := range chans {
		c.CatchUp(b.o.Server, ch, parent)
	}
}

// expired is the answer to a click on a keyboard ccbridge no longer knows.
const expired = "This button has expired."

func (b *Bot) onCallback(ctx context.Context, q *callbackQuery) {
	resp := &responder{b: b, queryID: q.ID}
	defer resp.finish(ctx)
	m := q.Message
	// A keyboard is answered in the group, and in the private chat of the
	// person clicking (a private thread's cards).
	if m == nil || (m.Chat.ID != b.o.ChatID && (m.Chat.Type != "private" || m.Chat.ID != q.From.ID)) {
		resp.answer(ctx, expired)
		return
	}
	if b.stranger(q.From) {
		b.log.Info("ignored a click from someone who is not an owner", "user", q.From.ID)
		return
	}
	resp.place, resp.origin = m.place(), MessageID(m.Chat.ID, m.MessageID)
	channelID := resp.place.ChannelID()
	t, ok := parseToken(q.Data)
	d, rows, known := b.p.drawingOf(m.Chat.ID, resp.origin)
	// A person's private chat is the same chat for every bot: a drawing
	// of another server's bot there is not this one's.
	if !ok || !known || d.Face != t.face || d.Server != b.o.Server || d.Used {
		resp.answer(ctx, expired)
		return
	}
	resp.user, resp.content, resp.rows = q.From.chatUser(), d.Content, rows
	tickKey := formKey(m.Chat.ID, m.MessageID) + "@" + d.Face
	b.mu.Lock()
	checked := maps.Clone(b.ticked[tickKey])
	b.mu.Unlock()
	if checked == nil {
		checked = checkedOf(m.ReplyMarkup)
	}
	c, ok := resolve(rows, t, checked)
	switch {
	case !ok:
		resp.answer(ctx, expired)
		return
	case c.toggle:
		b.toggle(ctx, tickKey, m, d.Face, rows, fmt.Sprintf("%d.%d", t.row, t.n))
		return
	case c.short > 0:
		resp.answer(ctx, fmt.Sprintf("Choose at least %d.", c.short))
		return
	}
	if d.AskedIn != "" {
		// An answer sent to this person alone: its click acts where it was
		// asked, once.
		if !b.p.use(ctx, m.Chat.ID, resp.origin, d.Face) {
			resp.answer(ctx, expired)
			return
		}
		channelID = d.AskedIn
	}
	resp.asked = channelID
	b.mu.Lock()
	delete(b.ticked, tickKey)
	b.mu.Unlock()
	b.h.HandleComponent(chat.ComponentEvent{Server: b.o.Server, ChannelID: channelID, MessageID: resp.origin, Content: d.Content, Rows: rows,
		User: q.From.chatUser(), CustomID: c.customID, Values: c.values}, resp)
}

// maxTicked bounds the multi-selects being answered at once.
const maxTicked = 1000

// toggle ticks or unticks a multi-select option and redraws the keyboard.
// Toggles of one message are applied one at a time, in the order clicked.
func (b *Bot) toggle(ctx context.Context, tickKey string, m *inMessage, face string, rows []chat.Row, option string) {
	b.toggling.Lock()
	defer b.toggling.Unlock()
	b.mu.Lock()
	if len(b.ticked) > maxTicked {
		clear(b.ticked) // forgotten choices fall back to what the keyboards show
	}
	checked := b.ticked[tickKey]
	if checked == nil {
		checked = checkedOf(m.ReplyMarkup)
		b.ticked[tickKey] = checked
	}
	checked[option] = !checked[option]
	kb := keyboardOf(face, rows, checked)
	b.mu.Unlock()
	params := map[string]any{"chat_id": m.Chat.ID, "message_id": m.MessageID, "reply_markup": kb}
	if err := b.p.c.call(ctx, "editMessageReplyMarkup", params, nil, true); err != nil && !notModified(err) {
		b.log.Warn("could not redraw a choice", "message", m.MessageID, "err", err)
	}
}
