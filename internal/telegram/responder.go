package telegram

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
)

// responder answers one command, click or form (chat.Responder) in
// Telegram's terms. Telegram has no ephemeral messages and no deferred
// answers: an ephemeral answer goes to the person alone (private.go);
// anything else is a message in the topic. Every callback query is
// answered exactly once (finish).
type responder struct {
	b     *Bot
	place Place
	// origin is the message clicked (or whose click opened a form);
	// replyTo the person's command message, which answers reply to.
	origin  string
	replyTo string
	// asked is the channel the event names when it is not place's (a
	// click on a private answer acts where that was asked).
	asked   string
	queryID string // a click's callback query, answered once
	// who acted, and what the clicked message showed: a form opened here
	// carries them to its chat.ModalEvent.
	user    chat.User
	content string
	rows    []chat.Row

	mu            sync.Mutex
	answered      bool
	deferredPlace bool   // DeferUpdate: Edit redraws origin
	private       bool   // Defer(true): the answer is for the person alone
	own           string // the message this responder posted, which Edit redraws
	ownPlace      Place  // where own is: the topic, or the person's private chat
}

// answerTimeout bounds one Bot API call of a responder: the core calls it
// without a context.
const answerTimeout = 30 * time.Second

// maxToast is Telegram's most characters in a callback query's answer.
const maxToast = 200

// answer answers the callback query with text (may be ""), once.
func (r *responder) answer(ctx context.Context, text string) bool {
	return r.answerWith(ctx, text, false)
}

// answerWith is answer, as an alert the person dismisses when alert.
func (r *responder) answerWith(ctx context.Context, text string, alert bool) bool {
	r.mu.Lock()
	if r.queryID == "" || r.answered {
		r.mu.Unlock()
		return false
	}
	r.answered = true
	r.mu.Unlock()
	params := map[string]any{"callback_query_id": r.queryID}
	if text != "" {
		params["text"] = text
		if alert {
			params["show_alert"] = true
		}
	}
	ctx, cancel := context.WithTimeout(ctx, answerTimeout)
	defer cancel()
	if err := r.b.p.c.call(ctx, "answerCallbackQuery", params, nil, true); err != nil {
		r.b.log.Warn("could not answer a click", "err", err)
	}
	return true
}

// finish answers a callback query the handler left unanswered, so the
// client's spinner stops.
func (r *responder) finish(ctx context.Context) { r.answer(ctx, "") }

func (r *responder) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), answerTimeout)
}

// post posts m in the place, replying to the command when there is one.
func (r *responder) post(m chat.Message) (string, error) {
	ctx, cancel := r.ctx()
	defer cancel()
	if m.ReplyTo == "" {
		m.ReplyTo = r.replyTo
	}
	id, err := r.b.p.Post(ctx, r.place.ChannelID(), m)
	if err != nil {
		return "", fmt.Errorf("answer: %w", err)
	}
	return id, nil
}

// Respond implements chat.Responder: an ephemeral answer to the person
// alone (whisper), anything else as a message in the topic.
func (r *responder) Respond(reply chat.Reply) error {
	if reply.Ephemeral {
		_, _, err := r.whisper(reply)
		return err
	}
	ctx, cancel := r.ctx()
	defer cancel()
	_, err := r.post(reply)
	r.answer(ctx, "")
	return err
}

// Defer implements chat.Responder: the click is answered (its spinner
// stops); a command shows "typing…" while it runs. An ephemeral one's
// answer (Edit) goes to the person alone.
func (r *responder) Defer(ephemeral bool) error {
	r.mu.Lock()
	r.private = ephemeral
	r.mu.Unlock()
	ctx, cancel := r.ctx()
	defer cancel()
	if !r.answer(ctx, "") && r.queryID == "" {
		_ = r.b.p.Typing(ctx, r.place.ChannelID())
	}
	return nil
}

// DeferUpdate implements chat.Responder.
func (r *responder) DeferUpdate() error {
	r.mu.Lock()
	r.deferredPlace = r.origin != ""
	r.mu.Unlock()
	ctx, cancel := r.ctx()
	defer cancel()
	r.answer(ctx, "")
	return nil
}

// Edit implements chat.Responder: after DeferUpdate it redraws the
// clicked message; otherwise it posts the answer, and redraws it after.
// An answer for the person alone (Defer(true), or an ephemeral reply) is
// never drawn in the group: it goes, or is redrawn, in their private chat.
func (r *responder) Edit(reply chat.Reply) (string, error) {
	r.mu.Lock()
	target, at := r.own, r.ownPlace
	if r.deferredPlace {
		target, at = r.origin, r.place
	}
	private := r.private || reply.Ephemeral
	r.mu.Unlock()
	if target != "" && (!private || at.Chat != r.place.Chat) {
		return r.redraw(at, target, reply)
	}
	id, at, err := r.draw(reply, private)
	if err != nil || id == "" {
		return id, err
	}
	r.mu.Lock()
	r.own, r.ownPlace = id, at
	r.mu.Unlock()
	return id, nil
}

// draw posts an answer: in the topic, or to the person alone.
func (r *responder) draw(reply chat.Reply, private bool) (string, Place, error) {
	if private {
		return r.whisper(reply)
	}
	id, err := r.post(reply)
	return id, r.place, err
}

// Update implements chat.Responder: it redraws the clicked message (a
// command has none: its answer is posted, as Edit).
func (r *responder) Update(msg chat.Message) (string, error) {
	if r.origin == "" {
		return r.Edit(msg)
	}
	id, err := r.redraw(r.place, r.origin, msg)
	ctx, cancel := r.ctx()
	defer cancel()
	r.answer(ctx, "")
	return id, err
}

func (r *responder) redraw(at Place, id string, m chat.Message) (string, error) {
	ctx, cancel := r.ctx()
	defer cancel()
	if at != r.place {
		m = privateOf(m) // the person's private chat: no controls
	}
	if err := r.b.p.Edit(ctx, at.ChannelID(), id, m); err != nil {
		return "", fmt.Errorf("answer: %w", err)
	}
	return id, nil
}

// OpenModal implements chat.Responder: the form is asked in the topic, a
// question at a time, each a message the person answers by replying
// (ForceReply); the last answer arrives as a chat.ModalEvent.
func (r *responder) OpenModal(m chat.Modal) error {
	ctx, cancel := r.ctx()
	defer cancel()
	err := r.b.openForm(ctx, r, m) // forms.go
	r.answer(ctx, "")
	return err
}
