package telegram

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/telegram/format"
)

// Forms. Telegram has no modal: a form is asked in the topic one input at
// a time, each a message with ForceReply that the person answers by
// replying to it; their last answer hands the core a chat.ModalEvent as
// Discord's submit would. Only the person who opened the form answers it;
// an unanswered form is forgotten after formTTL (and at a restart).

// formTTL is how long a form waits for its answers.
const formTTL = 15 * time.Minute

// formTail is in every form prompt: a reply to a prompt of the bot's
// holding it was meant as an answer, never as a prompt for Claude.
const formTail = "Reply to this message with your answer"

// formGone is said to a reply to a prompt no form waits for.
const formGone = "⚠️ Not sent to Claude: ccbridge no longer waits for an answer to that question (it restarted, or %d minutes passed), or it was asked of someone else. Click the button again to be asked anew."

// maxPlaceholder is Telegram's limit on ForceReply's placeholder.
const maxPlaceholder = 64

type form struct {
	modal   chat.Modal
	values  map[string]string
	next    int // the input being asked
	user    chat.User
	place   Place
	origin  string // the message whose click opened it
	content string
	rows    []chat.Row
	replyTo string // the command that opened it
	key     string // of the prompt waiting for its answer
	expires time.Time
}

func formKey(chatID, messageID int64) string {
	return strconv.FormatInt(chatID, 10) + "#" + strconv.FormatInt(messageID, 10)
}

// openForm asks a form's first input.
func (b *Bot) openForm(ctx context.Context, r *responder, m chat.Modal) error {
	if len(m.Inputs) == 0 {
		return fmt.Errorf("open form %s: no inputs", m.CustomID)
	}
	f := &form{modal: m, values: map[string]string{}, user: r.user, place: r.place, origin: r.origin, content: r.content, rows: r.rows, replyTo: r.replyTo}
	return b.ask(ctx, f, "")
}

// ask posts the prompt of f's next input; note says why it is asked again.
func (b *Bot) ask(ctx context.Context, f *form, note string) error {
	in := f.modal.Inputs[f.next]
	var text strings.Builder
	if note != "" {
		text.WriteString("⚠️ " + format.Escape(note) + "\n")
	}
	fmt.Fprintf(&text, "📝 <b>%s</b>", format.Escape(f.modal.Title))
	if len(f.modal.Inputs) > 1 {
		fmt.Fprintf(&text, " (%d/%d)", f.next+1, len(f.modal.Inputs))
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
	params := f.place.target(map[string]any{"text": text.String(), "parse_mode": "HTML",
		"reply_markup": map[string]any{"force_reply": true, "input_field_placeholder": placeholder}})
	if to, err := ParseMessage(f.replyTo); err == nil {
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
		return fmt.Errorf("ask %q of form %s: %w", in.Label, f.modal.CustomID, err)
	}
	for k, old := range b.forms {
		if time.Now().After(old.expires) {
			delete(b.forms, k)
		}
	}
	f.key, f.expires = formKey(f.place.Chat, msg.MessageID), time.Now().Add(formTTL)
	b.forms[f.key] = f
	return nil
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
	if f == nil || f.user.ID != strconv.FormatInt(m.From.ID, 10) {
		return nil
	}
	delete(b.forms, key)
	if time.Now().After(f.expires) {
		return nil
	}
	return f
}

// answerForm takes m as the answer to f's input, and asks the next one or
// hands the filled form over.
func (b *Bot) answerForm(ctx context.Context, f *form, m *inMessage) {
	in := f.modal.Inputs[f.next]
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
	f.values[in.CustomID] = v
	f.next++
	if f.next < len(f.modal.Inputs) {
		if err := b.ask(ctx, f, ""); err != nil {
			b.log.Warn("could not ask a form's next input", "err", err)
		}
		return
	}
	ev := chat.ModalEvent{Server: b.o.Server, ChannelID: f.place.ChannelID(), MessageID: f.origin, Content: f.content, Rows: f.rows,
		User: f.user, CustomID: f.modal.CustomID, Values: f.values}
	b.h.HandleModal(ev, &responder{b: b, place: f.place, origin: f.origin, replyTo: MessageID(m.MessageID), user: f.user, content: f.content, rows: f.rows})
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
	msg := chat.Message{Content: fmt.Sprintf(formGone, int(formTTL.Minutes())), ReplyTo: MessageID(m.MessageID)}
	if _, err := b.p.Post(ctx, m.place().ChannelID(), msg); err != nil {
		b.log.Warn("could not say a form is gone", "err", err)
	}
}
