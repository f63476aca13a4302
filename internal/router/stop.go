package router

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/intake"
)

// What a message (%s) is told when the daemon stops before it was
// delivered, without catch-up and with it (catchup.go).
const (
	notReached   = "⚠️ ccbridge stopped before %s reached Claude; send it again once it is back."
	notConfirmed = "⚠️ ccbridge stopped before Claude confirmed %s: it may have reached Claude, or still sit in the input box. Check with /screen once ccbridge is back."
	laterReached = "⏸️ ccbridge stopped before %s reached Claude; it will be delivered when ccbridge is back (if that takes longer than %s, you will be asked first)."
	laterChecked = "⏸️ ccbridge stopped before Claude confirmed %s; when ccbridge is back it checks what Claude received and delivers it only if Claude did not get it."
	// A voice note with review on: the restart shows its transcript again.
	notHeard   = "⚠️ ccbridge stopped before %s was transcribed; send it again once it is back."
	laterHeard = "⏸️ ccbridge stopped before this voice note was transcribed; when it is back it transcribes it again and shows you the transcript (if that takes longer than %s, you will be asked first)."
)

// Shutdown notices run on a context of their own, the router's having
// ended: each call gets stopNotice, all of one worker's stopBudget.
const (
	stopNotice = 5 * time.Second
	stopBudget = 20 * time.Second
)

// tellStopped says, under each message, that the daemon stopped before
// delivering it. Without catch-up it marks it ⚠️ (it is lost); with it the
// message keeps no mark, so that catch-up picks it up (a ⚠️ would say it was
// handled).
func (r *Router) tellStopped(text string, its ...item) {
	// Catch-up redoes the other items; a prompt ccbridge typed itself
	// (/thread's) has no message to read back.
	its = slices.DeleteFunc(slices.Clone(its), func(it item) bool { return it.kind != deliverItem })
	if len(its) == 0 {
		return
	}
	budget, cancel := context.WithTimeout(context.WithoutCancel(r.ctx), stopBudget)
	defer cancel()
	for _, it := range its {
		ev := it.ev
		r.opt.Log.Warn("ccbridge stopped before a message was delivered", "channel", ev.ChannelID, "message", ev.MessageID)
		if r.catchingUp() && ev.MessageID != "" && !it.own {
			ctx, cancel := context.WithTimeout(budget, stopNotice)
			if text != notConfirmed && r.putBack(ctx, ev) {
				cancel()
				continue
			}
			if err := r.opt.Replier.Send(ctx, ev.Server, ev.ChannelID, r.laterNotice(ev.Server, text)); err != nil {
				r.opt.Log.Error("could not post a notice", "channel", ev.ChannelID, "err", err)
			}
			cancel()
			continue
		}
		if ev.MessageID != "" {
			ctx, cancel := context.WithTimeout(budget, stopNotice)
			if err := r.opt.Replier.React(ctx, ev.Server, ev.ChannelID, ev.MessageID, "⚠️"); err != nil {
				r.opt.Log.Error("could not react", "message", ev.MessageID, "err", err)
			}
			cancel()
		}
		what := "this message"
		if ev.MessageID == "" { // a prompt ccbridge typed itself (/thread's)
			what = "this thread's first prompt"
		}
		ctx, cancel := context.WithTimeout(budget, stopNotice)
		if err := r.opt.Replier.Send(ctx, ev.Server, ev.ChannelID, fmt.Sprintf(text, what)); err != nil {
			r.opt.Log.Error("could not post a notice", "channel", ev.ChannelID, "err", err)
		}
		cancel()
	}
}

// putBack reopens the Deliver anyway offer of a message clicked but not
// typed yet, and says so under it with the button again; it reports
// whether the message had such an offer. Catch-up would only offer it
// again, so no delivery is promised.
func (r *Router) putBack(ctx context.Context, ev chat.MessageEvent) bool {
	expires := r.now().Add(r.conf().Claude.PromptTimeout.Duration)
	back, err := r.book().PutBack(ctx, intake.Of(ev), expires)
	if err != nil {
		r.opt.Log.Error("could not reopen a Deliver anyway offer", "channel", ev.ChannelID, "message", ev.MessageID, "err", err)
	}
	if !back {
		return false
	}
	if err := r.postOffer(ctx, ev, intake.PutBackText(intake.Of(ev), expires)); err != nil { // late.go
		r.opt.Log.Error("could not post a notice", "channel", ev.ChannelID, "err", err)
	}
	return true
}

// stoppedDuring tells a message that failed because the daemon is
// stopping so (typed: it was typed into the pane, unconfirmed), and
// reports whether that was the cause: the failure's own notice would
// only say "context canceled", and could not be posted.
func (r *Router) stoppedDuring(it item, typed bool) bool {
	if r.ctx.Err() == nil {
		return false
	}
	text := notReached
	if typed {
		text = notConfirmed
	}
	r.tellStopped(text, it)
	return true
}
