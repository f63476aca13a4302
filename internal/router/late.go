package router

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ccbridge/ccbridge/internal/audit"
	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/intake"
	"github.com/ccbridge/ccbridge/internal/state"
)

// Messages catch-up does not deliver on its own (catchup.go): checking one
// typed before a crash against what Claude received, and the Deliver anyway
// offer for one missed too long ago.

// received tells whether Claude got a message typed before ccbridge
// stopped (intake.Received). Without the session's record (the machine
// restarted) it cannot be told.
func (r *Router) received(t state.Typed) intake.Receipt {
	rec, err := r.opt.Store.Sessions.Get(t.Session)
	if err != nil {
		return intake.ReceiptUnknown
	}
	got, err := intake.Received(rec, t)
	if err != nil {
		r.opt.Log.Warn("catch-up: cannot read the transcript", "session", t.Session, "err", err)
	}
	return got
}

// offer marks a message ⚠️ and posts, under it, why it was not delivered,
// with a Deliver anyway button for its author, which expires like an
// approval card (prompt_timeout).
func (r *Router) offer(tg target, it item) {
	ev := it.ev
	log := r.opt.Log.With("session", tg.key, "message", ev.MessageID)
	now := r.now()
	if err := r.book().Offer(r.ctx, intake.Of(ev), ev.Author.ID, now, now.Add(r.conf().Claude.PromptTimeout.Duration)); err != nil {
		log.Error("could not record a Deliver anyway offer", "err", err)
	}
	r.react(ev, "⚠️")
	link := messageRef(ev.ChannelID, ev.MessageID)
	text := fmt.Sprintf("⚠️ %s was sent %s ago, while ccbridge was away: longer ago than `catch_up` (%s), so it was not delivered on its own.",
		chat.MessageRef{ChannelID: ev.ChannelID, MessageID: ev.MessageID, Label: "This message"}, now.Sub(it.at).Round(time.Second), r.catchUpAge())
	switch {
	case it.unsure:
		text = fmt.Sprintf("⚠️ ccbridge stopped while typing %s and cannot tell whether Claude received it, so it was not typed again.", link)
	case it.held:
		text = fmt.Sprintf("⚠️ ccbridge stopped before %s reached Claude, %s ago: longer ago than `catch_up` (%s), so it was not delivered on its own.",
			link, now.Sub(it.at).Round(time.Second), r.catchUpAge())
	case it.reoffer:
		text = fmt.Sprintf("⚠️ ccbridge stopped before %s reached Claude, after Deliver anyway was clicked; it was not delivered. The offer is open again.", link)
	}
	if err := r.postOffer(r.ctx, ev, text); err != nil {
		log.Error("could not offer Deliver anyway", "err", err)
	}
	log.Info("a message missed too long ago was offered, not delivered", "age", now.Sub(it.at).Round(time.Second), "unsure", it.unsure)
}

// postOffer posts text with a message's Deliver anyway button (text alone
// if the button cannot be made).
func (r *Router) postOffer(ctx context.Context, ev chat.MessageEvent, text string) error {
	id, err := chat.ID{Instance: r.opt.Instance, Kind: lateKind, Args: []string{ev.MessageID}}.Encode()
	if err != nil {
		if serr := r.opt.Replier.Send(ctx, ev.Server, ev.ChannelID, text); serr != nil {
			return serr
		}
		return err
	}
	m := chat.Message{Content: text, Rows: []chat.Row{{Buttons: []chat.Button{{Label: "Deliver anyway", CustomID: id, Style: chat.Primary}}}}}
	_, err = r.opt.Replier.Post(ctx, ev.Server, ev.ChannelID, m)
	return err
}

// messageRef names a message in a notice: each front end makes it a link.
func messageRef(channelID, messageID string) chat.MessageRef {
	return chat.MessageRef{ChannelID: channelID, MessageID: messageID, Label: "this message"}
}

// refusal is why a Deliver anyway click changes nothing, as the person
// clicking is told.
type refusal string

func (e refusal) Error() string { return string(e) }

const (
	offerGone     refusal = "This offer is no longer open (it expired after the prompt timeout). Send the message again."
	offerUsed     refusal = "This message was delivered already; nothing was done."
	offerNotYours refusal = "Only the person who sent this message can deliver it."
)

// deliverAnyway answers a Deliver anyway click: once, by the message's
// author, before the offer expires, the message is read back and queued
// for its session like a message just sent (with its ✅ on receipt).
func (r *Router) deliverAnyway(ev chat.ComponentEvent, args []string, resp chat.Responder) {
	if len(args) != 1 || !r.catchingUp() {
		_ = resp.Respond(chat.Reply{Content: "This button is no longer valid.", Ephemeral: true})
		return
	}
	msgID := args[0]
	ref := intake.Ref{Server: ev.Server, ChannelID: ev.ChannelID, MessageID: msgID}
	// Spent and held in one step: the message is older than the cursor,
	// and must survive a restart until it is delivered.
	cur, err := r.book().UseOffer(r.ctx, ref, ev.User.ID, r.now())
	for sentinel, no := range map[error]refusal{intake.ErrOfferGone: offerGone, intake.ErrOfferUsed: offerUsed, intake.ErrOfferNotYours: offerNotYours} {
		if errors.Is(err, sentinel) {
			_ = resp.Respond(chat.Reply{Content: string(no), Ephemeral: true})
			return
		}
	}
	if err != nil {
		_ = resp.Respond(chat.Reply{Content: "⚠️ " + chat.ErrText(err), Ephemeral: true})
		return
	}
	tg, ok := r.resolve(ev.Server, ev.ChannelID, cur.ParentID)
	if !ok {
		r.release(chat.MessageEvent{Server: ev.Server, ChannelID: ev.ChannelID, MessageID: msgID})
		_ = resp.Respond(chat.Reply{Content: "This channel is no longer one of ccbridge's projects; nothing was delivered.", Ephemeral: true})
		return
	}
	link := messageRef(ev.ChannelID, msgID)
	_, _ = resp.Update(chat.Message{Content: fmt.Sprintf("📨 Delivering %s now, as %s asked.", link, chat.Mention(ev.User))})
	r.opt.Log.Info("deliver anyway", "channel", ev.ChannelID, "message", msgID, "by", ev.User.ID)
	r.wg.Add(1) // a stop waits for it, and it may put the offer back
	go func() {
		defer r.wg.Done()
		ctx, cancel := context.WithTimeout(r.ctx, catchUpRead)
		defer cancel()
		m, err := r.opt.History.Message(ctx, ev.Server, ev.ChannelID, msgID)
		if err != nil && r.ctx.Err() != nil {
			// Stopping: the offer is reopened and said so, as for one
			// queued (the message is not forgotten with its offer spent).
			r.tellStopped(notReached, item{ev: chat.MessageEvent{Server: ev.Server, ChannelID: ev.ChannelID, ParentID: cur.ParentID, MessageID: msgID, Author: ev.User}})
			return
		}
		if err != nil {
			r.release(chat.MessageEvent{Server: ev.Server, ChannelID: ev.ChannelID, ParentID: cur.ParentID, MessageID: msgID})
			r.send(ev.Server, ev.ChannelID, fmt.Sprintf("⚠️ Could not read %s back from %s, so it was not delivered: %s. Send it again.", link, audit.Title(frontEnd(tg.rt.server)), chat.ErrText(err)))
			return
		}
		msg := m.Event
		msg.Server, msg.ParentID = ev.Server, cur.ParentID
		// Taken in this process: a catch-up that reads it back meanwhile
		// (a READY after lost events) must not offer it again.
		r.book().Claim(intake.Of(msg))
		if audio, ok := msg.Voice(); ok {
			r.voiceNote(tg, msg, audio) // voice.go: transcribed first, as live
			return
		}
		r.enqueue(tg, item{ev: msg, again: true})
	}()
}
