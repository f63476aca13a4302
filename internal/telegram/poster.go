package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/state"
)

// Poster posts as one Telegram bot: chat.Poster over the Bot API.
type Poster struct {
	c      *Client
	server string
	store  *state.Telegram

	mu      sync.Mutex
	nonces  map[string]sent          // PostOnce: what each nonce made
	posting map[string]chan struct{} // PostOnce: the nonces being posted
	// sending counts the keyboards being sent: a click can come back
	// before its message's send returns and its record is written, and
	// must wait for it (drawingOf).
	sending int
	drawn   *sync.Cond // on mu
}

// sent is a message a nonce made.
type sent struct {
	id string
	at time.Time
}

// nonceTTL is how long PostOnce remembers a nonce, as Discord does.
const nonceTTL = 10 * time.Minute

var _ chat.Poster = (*Poster)(nil)

// NewPoster returns the poster of server's bot. store keeps what its
// keyboards drew and the topics it opened (state.OpenTelegram).
func NewPoster(apiBase, token, server string, store *state.Telegram) (*Poster, error) {
	if store == nil {
		return nil, errors.New("telegram: no state for the poster")
	}
	c, err := NewClient(apiBase, token)
	if err != nil {
		return nil, err
	}
	p := &Poster{c: c, server: server, store: store, nonces: map[string]sent{}, posting: map[string]chan struct{}{}}
	p.drawn = sync.NewCond(&p.mu)
	return p, nil
}

// Limit is the most characters one message may hold.
func (p *Poster) Limit() int { return MaxText }

// message is the part of a Telegram Message ccbridge reads.
type message struct {
	MessageID int64 `json:"message_id"`
	Document  *struct {
		FileID string `json:"file_id"`
	} `json:"document"`
}

// Post posts m: its text in as many messages as it takes (the keyboard on
// the last), then its files, one document each. It returns the id of the
// message with the keyboard (or the last text, or the first document).
// 429s are waited out within ctx; other failures are not retried, since
// Telegram takes no nonce and a send answered late may have been made.
func (p *Poster) Post(ctx context.Context, channelID string, m chat.Message) (string, error) {
	id, _, err := p.post(ctx, channelID, m)
	return id, err
}

// PostOnce is Post, answered from memory when the same nonce made a
// message in this process lately (the Bot API has no nonce of its own).
func (p *Poster) PostOnce(ctx context.Context, channelID, nonce string, m chat.Message) (string, error) {
	return p.once(ctx, channelID, nonce, func() (string, error) { return p.Post(ctx, channelID, m) })
}

// once runs post at most once per nonce ("" always runs it). One post per
// nonce at a time: a retry (the outbox's, after the hook gave up waiting)
// waits for the send still under way, and takes its message rather than
// making a second.
func (p *Poster) once(ctx context.Context, channelID, nonce string, post func() (string, error)) (string, error) {
	if nonce == "" {
		return post()
	}
	p.mu.Lock()
	for k, s := range p.nonces {
		if time.Since(s.at) > nonceTTL {
			delete(p.nonces, k)
		}
	}
	for {
		if s, ok := p.nonces[nonce]; ok {
			p.mu.Unlock()
			return s.id, nil
		}
		busy, ok := p.posting[nonce]
		if !ok {
			break
		}
		p.mu.Unlock()
		select {
		case <-busy:
		case <-ctx.Done():
			return "", fmt.Errorf("post to %s: %w", channelID, ctx.Err())
		}
		p.mu.Lock()
	}
	busy := make(chan struct{})
	p.posting[nonce] = busy
	p.mu.Unlock()
	id, err := post()
	p.mu.Lock()
	if err == nil {
		p.nonces[nonce] = sent{id: id, at: time.Now()}
	}
	delete(p.posting, nonce)
	close(busy)
	p.mu.Unlock()
	return id, err
}

// PostCard is Post. Files go as documents of their own, so the message
// with the keyboard carries none: fileIDs is nil, as the click's message
// will show.
func (p *Poster) PostCard(ctx context.Context, channelID string, m chat.Message) (string, []string, error) {
	id, _, err := p.post(ctx, channelID, m)
	return id, nil, err
}

func (p *Poster) post(ctx context.Context, channelID string, m chat.Message) (string, []string, error) {
	chunks := render(m.Content)
	if len(chunks) == 0 && len(m.Rows) > 0 {
		chunks = []string{"…"} // a keyboard needs a text to hang from
	}
	id, docs, err := p.send(ctx, channelID, chunks, m)
	if err != nil {
		return "", nil, fmt.Errorf("post to %s: %w", channelID, err)
	}
	return id, docs, nil
}

// send posts rendered chunks, m's keyboard on the last, then m's files.
func (p *Poster) send(ctx context.Context, channelID string, chunks []string, m chat.Message) (id string, docs []string, err error) {
	return p.sendAsked(ctx, channelID, "", chunks, m)
}

// sendAsked is send, recording a keyboard as asked in askedIn (see
// state.TelegramDrawn) when it is not "".
func (p *Poster) sendAsked(ctx context.Context, channelID, askedIn string, chunks []string, m chat.Message) (id string, docs []string, err error) {
	place, err := ParseChannel(channelID)
	if err != nil {
		return "", nil, err
	}
	face := faceToken(m.Content, m.Rows)
	kb := keyboardOf(face, m.Rows, nil)
	if kb != nil {
		defer p.drawingUnderWay()()
	}
	for i, text := range chunks {
		params := place.target(map[string]any{"text": text, "parse_mode": "HTML", "link_preview_options": map[string]any{"is_disabled": true}})
		if i == 0 && m.ReplyTo != "" {
			if to, err := place.message(m.ReplyTo); err == nil {
				params["reply_parameters"] = map[string]any{"message_id": to, "allow_sending_without_reply": true}
			}
		}
		if i == len(chunks)-1 && kb != nil {
			params["reply_markup"] = kb
		}
		var msg message
		if err := p.c.call(ctx, "sendMessage", params, &msg, false); err != nil {
			return "", nil, err
		}
		id = MessageID(place.Chat, msg.MessageID)
	}
	if kb != nil && id != "" {
		p.draw(ctx, channelID, id, face, askedIn, m)
	}
	for _, f := range m.Files {
		msg, err := p.sendDocument(ctx, place, f)
		if err != nil {
			return "", nil, fmt.Errorf("send %s: %w", f.Name, err)
		}
		if id == "" {
			id = MessageID(place.Chat, msg.MessageID)
		}
		if msg.Document != nil {
			docs = append(docs, msg.Document.FileID)
		}
	}
	return id, docs, nil
}

func (p *Poster) sendDocument(ctx context.Context, place Place, f chat.File) (message, error) {
	fields := map[string]string{"chat_id": strconv.FormatInt(place.Chat, 10)}
	if place.Topic != 0 {
		fields["message_thread_id"] = strconv.FormatInt(place.Topic, 10)
	}
	var msg message
	err := retry(ctx, false, func() error { return p.c.upload(ctx, "sendDocument", fields, "document", f.Name, f.Data, &msg) })
	return msg, err
}

// draw records what a keyboard of a message stands for (see keyboard.go),
// asked in askedIn ("" for where it is, or, for a message redrawn, where
// it was first asked). A failure is logged by the caller's click: it
// answers "expired".
func (p *Poster) draw(ctx context.Context, channelID, messageID, face, askedIn string, m chat.Message) {
	place, err := ParseChannel(channelID)
	if err != nil {
		return
	}
	rows, err := json.Marshal(m.Rows)
	if err != nil {
		return
	}
	rec := state.TelegramDrawn{Server: p.server, ChannelID: channelID, MessageID: messageID, Face: face, Content: m.Content, Rows: rows, Drawn: time.Now().UTC(),
		AskedIn: askedIn}
	key := state.TelegramDrawnKey(p.server, strconv.FormatInt(place.Chat, 10), messageID)
	_, _ = p.store.Drawn.Update(context.WithoutCancel(ctx), key, func(d *state.TelegramDrawn) error {
		if rec.AskedIn == "" && d.Server == rec.Server {
			rec.AskedIn = d.AskedIn
		}
		// A private answer acts once: drawing the same face again
		// keeps it used.
		rec.Used = d.Used && d.Server == rec.Server && d.Face == rec.Face
		*d = rec
		return nil
	})
}

// undraw forgets a message's keyboard: its buttons are gone.
func (p *Poster) undraw(ctx context.Context, chatID int64, messageID string) {
	_ = p.store.Drawn.Delete(context.WithoutCancel(ctx), state.TelegramDrawnKey(p.server, strconv.FormatInt(chatID, 10), messageID))
}

// drawingUnderWay counts a keyboard being sent, for drawingOf, until the
// returned func is called (once its record is written).
func (p *Poster) drawingUnderWay() (done func()) {
	p.mu.Lock()
	p.sending++
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		p.sending--
		p.drawn.Broadcast()
		p.mu.Unlock()
	}
}

// drawingOf is drawing, waiting first for the keyboards being sent when
// the message's record is not there yet.
func (p *Poster) drawingOf(chatID int64, messageID string) (state.TelegramDrawn, []chat.Row, bool) {
	d, rows, ok := p.drawing(chatID, messageID)
	p.mu.Lock()
	for !ok && p.sending > 0 {
		p.drawn.Wait()
		p.mu.Unlock()
		d, rows, ok = p.drawing(chatID, messageID)
		p.mu.Lock()
	}
	p.mu.Unlock()
	return d, rows, ok
}

// drawing reads what a message's keyboard stands for.
func (p *Poster) drawing(chatID int64, messageID string) (state.TelegramDrawn, []chat.Row, bool) {
	d, err := p.store.Drawn.Get(state.TelegramDrawnKey(p.server, strconv.FormatInt(chatID, 10), messageID))
	if err != nil {
		return d, nil, false
	}
	var rows []chat.Row
	if json.Unmarshal(d.Rows, &rows) != nil {
		return d, nil, false
	}
	return d, rows, true
}

// Edit replaces a message's text and keyboard (none: the keyboard goes).
// Text past one message follows in new ones, and files as new documents:
// Telegram edits a message's text only.
func (p *Poster) Edit(ctx context.Context, channelID, messageID string, m chat.Message) error {
	place, err := ParseChannel(channelID)
	if err != nil {
		return err
	}
	msgID, err := place.message(messageID)
	if err != nil {
		return err
	}
	chunks := render(m.Content)
	if len(chunks) == 0 {
		chunks = []string{"…"}
	}
	face := faceToken(m.Content, m.Rows)
	kb := keyboardOf(face, m.Rows, nil)
	params := map[string]any{"chat_id": place.Chat, "message_id": msgID, "text": chunks[0], "parse_mode": "HTML",
		"link_preview_options": map[string]any{"is_disabled": true}}
	if kb != nil && len(chunks) == 1 {
		params["reply_markup"] = kb
		// Recorded first: a click on the new keyboard must find it.
		p.draw(ctx, channelID, messageID, face, "", m)
	}
	if err := p.c.call(ctx, "editMessageText", params, nil, true); err != nil && !notModified(err) {
		return fmt.Errorf("edit %s: %w", messageID, err)
	}
	if kb == nil || len(chunks) > 1 {
		p.undraw(ctx, place.Chat, messageID)
	}
	if len(chunks) > 1 || len(m.Files) > 0 {
		if _, _, err := p.send(ctx, channelID, chunks[1:], chat.Message{Content: m.Content, Rows: m.Rows, Files: m.Files}); err != nil {
			return fmt.Errorf("edit %s: the rest: %w", messageID, err)
		}
	}
	return nil
}

// EditCard is Edit: a topic is never archived out of reach, so the
// outcome needs no message of its own.
func (p *Poster) EditCard(ctx context.Context, channelID, messageID string, m chat.Message, _ string) error {
	return p.Edit(ctx, channelID, messageID, m)
}
