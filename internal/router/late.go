package router

import (
	"context"
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
	text := intake.OfferText(intake.Of(ev), it.why, now.Sub(it.at), r.catchUpAge(it.ev.Server))
	if err := r.postOffer(r.ctx, ev, text); err != nil {
		log.Error("could not offer Deliver anyway", "err", err)
	}
	log.Info("a message missed too long ago was offered, not delivered", "age", now.Sub(it.at).Round(time.Second), "unsure", it.why.Unsure)
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
	m := chat.Message{Content: text, Rows: []chat.Row{{Buttons: []chat.Button{{Label: intake.DeliverLabel, CustomID: id, Style: chat.Primary}}}}}
	_, err = r.opt.Replier.Post(ctx, ev.Server, ev.ChannelID, m)
	return err
}

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
	if no, ok := intake.Refusal(err); ok {
		_ = resp.Respond(chat.Reply{Content: no, Ephemeral: true})
		return
	}
	if err != nil {
		_ = resp.Respond(chat.Reply{Content: "⚠️ " + chat.ErrText(err), Ephemeral: true})
		return
	}
	tg, ok := r.resolve(ev.Server, ev.ChannelID, cur.ParentID)
	if !ok {
		r.release(chat.MessageEvent{Server: ev.Server, ChannelID: ev.ChannelID, MessageID: msgID})
		_ = resp.Respond(chat.Reply{Content: intake.NotAProjectText, Ephemeral: true})
		return
	}
	_, _ = resp.Update(chat.Message{Content: intake.DeliveringText(ref, ev.User)})
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
			r.send(ev.Server, ev.ChannelID, intake.NotReadBackText(ref, audit.Title(frontEnd(tg.rt.server)), err))
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
