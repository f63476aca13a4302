package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/telegram/format"
)

// Forms. Telegram has no modal: a form is asked in the topic one input at
// a time, each a message with ForceReply that the person answers by
// replying to it; their last answer hands the core a chat.ModalEvent as
// Discord's submit would. Any owner may answer a prompt, as any owner may
// press a card's buttons on Discord (and there fill the form in a modal of
// their own): the event is the answerer's, whom the core checks; strangers
// are turned away at the door. A form waiting for its answer is recorded
// (state.TelegramForm), so an answer after a restart still lands; an
// unanswered form is forgotten after formTTL.

// formTTL is how long a form waits for its answers.
const formTTL = 15 * time.Minute

// formTail is in every form prompt: a reply to a prompt of the bot's
// holding it was meant as an answer, never as a prompt for Claude.
const formTail = "Reply to this message with your answer"

// formGone is said to a reply to a prompt no form waits for.
const formGone = "⚠️ Not sent to Claude: ccbridge no longer waits for an answer to that question (it was answered, or %d minutes passed). Click the button again to be asked anew."

// recordTimeout bounds writing a form's record (a locked write in the
// state directory).
const recordTimeout = 5 * time.Second

// maxPlaceholder is Telegram's limit on ForceReply's placeholder.
const maxPlaceholder = 64

// form is a form being answered, as recorded (JSON) between its prompts.
type form struct {
	Modal   chat.Modal        `json:"modal"`
	Values  map[string]string `json:"values"`
	Next    int               `json:"next"` // the input being asked
	Place   Place             `json:"place"`
	Origin  string            `json:"origin"` // the message whose click opened it
	Content string            `json:"content"`
	Rows    []chat.Row        `json:"rows"`
	ReplyTo string            `json:"reply_to"` // the command that opened it
	key     string            // of the prompt waiting for its answer
	expires time.Time
}

func formKey(chatID, messageID int64) string {
	return state.TelegramFormKey(strconv.FormatInt(chatID, 10), strconv.FormatInt(messageID, 10))
}

// openForm asks a form's first input.
func (b *Bot) openForm(ctx context.Context, r *responder, m chat.Modal) error {
	if len(m.Inputs) == 0 {
		return fmt.Errorf("open form %s: no inputs", m.CustomID)
	}
	f := &form{Modal: m, Values: map[string]string{}, Place: r.place, Origin: r.origin, Content: r.content, Rows: r.rows, ReplyTo: r.replyTo}
	return b.ask(ctx, f, "")
}

// ask posts the prompt of f's next input; note says why it is asked again.
func (b *Bot) ask(ctx context.Context, f *form, note string) error {
	in := f.Modal.Inputs[f.Next]
	var text strings.Builder
	if note != "" {
		text.WriteString("⚠️ " + format.Escape(note) + "\n")
	}
	fmt.Fprintf(&text, "📝 <b>%s</b>", format.Escape(f.Modal.Title))
	if len(f.Modal.Inputs) > 1 {
		fmt.Fprintf(&text, " (%d/%d)", f.Next+1, len(f.Modal.Inputs))
	}
	text.WriteString("\n" + format.Escape(in.Label))
	if in.Value != "" {
		text.WriteString("\nNow: <code>" + format.Escape(in.Value) + "</code>")
	}
	text.WriteString("\n" + formTail)
	if !in.Required {
		text.WriteString(", or <code>-</code> to leave it empty")
	}
	text.WriteString(".")
	placeholder := in.Label
	if r := []rune(placeholder); len(r) > maxPlaceholder {
		placeholder = string(r[:maxPlaceholder])
	}
	params := f.Place.target(map[string]any{"text": text.String(), "parse_mode": "HTML",
		"reply_markup": map[string]any{"force_reply": true, "input_field_placeholder": placeholder}})
	if to, err := f.Place.message(f.ReplyTo); err == nil {
		params["reply_parameters"] = map[string]any{"message_id": to, "allow_sending_without_reply": true}
	}
	b.mu.Lock()
	b.asking++
	b.mu.Unlock()
	var msg message
	err := b.p.c.call(ctx, "sendMessage", params, &msg, false)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.asking--
	b.asked.Broadcast()
	if err != nil {
		return fmt.Errorf("ask %q of form %s: %w", in.Label, f.Modal.CustomID, err)
	}
	for k, old := range b.forms {
		if time.Now().After(old.expires) {
			delete(b.forms, k)
		}
	}
	f.key, f.expires = formKey(f.Place.Chat, msg.MessageID), time.Now().Add(formTTL)
	b.forms[f.key] = f
	b.keepForm(ctx, f)
	return nil
}

// keepForm records f as waiting for the answer to its prompt; caller
// holds b.mu. A form not recorded is lost at a restart, no worse.
func (b *Bot) keepForm(ctx context.Context, f *form) {
	raw, err := json.Marshal(f)
	if err == nil {
		rec := state.TelegramForm{Server: b.o.Server, Expires: f.expires.UTC(), Form: raw}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
		defer cancel()
		_, err = b.p.store.Forms.Update(ctx, f.key, func(r *state.TelegramForm) error { *r = rec; return nil })
	}
	if err != nil {
		b.log.Warn("could not record a form; a restart will forget it", "err", err)
	}
}

// storedForm reads the form recorded as waiting on a prompt (key), one
// asked before a restart; nil when there is none of this bot's.
func (b *Bot) storedForm(key string) *form {
	rec, err := b.p.store.Forms.Get(key)
	if err != nil || rec.Server != b.o.Server {
		return nil
	}
	var f form
	if json.Unmarshal(rec.Form, &f) != nil || len(f.Modal.Inputs) == 0 || f.Next >= len(f.Modal.Inputs) {
		return nil
	}
	f.key, f.expires = key, rec.Expires
	return &f
}

// formFor takes the form whose prompt m answers, if m is its person's
// reply to it.
func (b *Bot) formFor(m *inMessage) *form {
	if m.ReplyToMessage == nil || m.From == nil {
		return nil
	}
	key := formKey(m.Chat.ID, m.ReplyToMessage.MessageID)
	b.mu.Lock()
	defer b.mu.Unlock()
	f := b.forms[key]
	for f == nil && b.asking > 0 && m.ReplyToMessage.From != nil && m.ReplyToMessage.From.IsBot {
		b.asked.Wait() // perhaps the prompt it answers, not yet recorded
		f = b.forms[key]
	}
	if f == nil {
		f = b.storedForm(key) // asked before a restart
	}
	if f == nil {
		return nil
	}
	// Taken once: a second reply to the same prompt finds the form gone.
	delete(b.forms, key)
	ctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
	defer cancel()
	if err := b.p.store.Forms.Delete(ctx, key); err != nil && !errors.Is(err, state.ErrNotFound) {
		b.log.Warn("could not forget a form answered", "err", err)
	}
	if time.Now().After(f.expires) {
		return nil
	}
	return f
}

// answerForm takes m as the answer to f's input, and asks the next one or
// hands the filled form over.
func (b *Bot) answerForm(ctx context.Context, f *form, m *inMessage) {
	in := f.Modal.Inputs[f.Next]
	v := strings.TrimSpace(m.Text)
	if v == "" {
		v = strings.TrimSpace(m.Caption)
	}
	if v == "-" && !in.Required {
		v = ""
	}
	limit := chat.MaxInputLength
	if in.MaxLength > 0 {
		limit = in.MaxLength
	}
	note := ""
	switch {
	case in.Required && v == "":
		note = "This answer cannot be empty."
	case utf8.RuneCountInString(v) > limit:
		note = fmt.Sprintf("That answer is too long: at most %d characters.", limit)
	}
	if note != "" {
		if err := b.ask(ctx, f, note); err != nil {
			b.log.Warn("could not ask a form again", "err", err)
		}
		return
	}
	f.Values[in.CustomID] = v
	f.Next++
	if f.Next < len(f.Modal.Inputs) {
		if err := b.ask(ctx, f, ""); err != nil {
			b.log.Warn("could not ask a form's next input", "err", err)
		}
		return
	}
	// The answerer's: the core checks who acts, as for a click.
	by := m.From.chatUser()
	ev := chat.ModalEvent{Server: b.o.Server, ChannelID: f.Place.ChannelID(), MessageID: f.Origin, Content: f.Content, Rows: f.Rows,
		User: by, CustomID: f.Modal.CustomID, Values: f.Values}
	b.h.HandleModal(ev, &responder{b: b, place: f.Place, origin: f.Origin, replyTo: MessageID(m.Chat.ID, m.MessageID), user: by, content: f.Content, rows: f.Rows})
}

// answersGoneForm reports whether m replies to a form prompt of this bot
// that no form waits for (formFor found none): its text was meant for the
// form, so it goes nowhere else.
func (b *Bot) answersGoneForm(m *inMessage) bool {
	r := m.ReplyToMessage
	return r != nil && r.From != nil && r.From.IsBot && r.From.Username == b.name && strings.Contains(r.Text, formTail)
}

// sayFormGone tells the person their answer went nowhere.
func (b *Bot) sayFormGone(ctx context.Context, m *inMessage) {
	ctx, cancel := context.WithTimeout(ctx, answerTimeout)
	defer cancel()
	msg := chat.Message{Content: fmt.Sprintf(formGone, int(formTTL.Minutes())), ReplyTo: MessageID(m.Chat.ID, m.MessageID)}
	if _, err := b.p.Post(ctx, m.place().ChannelID(), msg); err != nil {
		b.log.Warn("could not say a form is gone", "err", err)
	}
}
