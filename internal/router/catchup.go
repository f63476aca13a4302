package router

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/intake"
	"github.com/ccbridge/ccbridge/internal/opened"
	"github.com/ccbridge/ccbridge/internal/state"
)

// Catch-up: nothing an owner sends while ccbridge is down is lost.
//
// Every message the worker finishes with (delivered with Claude's receipt,
// or told why not) moves the channel's durable cursor up to it. On READY
// (the first connection, and every one that lost events) the gateway has
// the router read back, per channel and thread, what came after its cursor,
// in the channel's own queue, so it runs before any message arriving live
// on that connection. Each owner message younger than catch_up is queued as
// if it had just arrived; an older one gets ⚠️ and a Deliver anyway offer.
// A message carrying the bot's ✅ or ⚠️ was handled already, one queued in
// this process already is not queued again, and one typed into the pane but
// unconfirmed at a crash is checked against what Claude received before it
// is typed again. A message in flight that newer ones passed (see
// internal/intake) is read back by id, whatever the cursor says.

// History reads a channel's messages back from Discord.
type History interface {
	// After returns, oldest first, every message after afterID (with ""
	// only the latest ones).
	After(ctx context.Context, server, channelID, afterID string) ([]Missed, error)
	// Message reads one message.
	Message(ctx context.Context, server, channelID, messageID string) (Missed, error)
}

// Missed is a message read back.
type Missed struct {
	Event chat.MessageEvent
	At    time.Time // when it was created
	// Marked lists the emoji the bot itself reacted with.
	Marked []string
}

// What a worker does with an item.
const (
	deliverItem = iota // type it into the session
	offerItem          // missed too long ago: ⚠️ and a Deliver anyway offer
	confirmItem        // typed before a crash, and Claude has it: its ✅
	doneItem           // a message in flight settled (a voice note cancelled): the cursor moves to it in turn
)

// item is one piece of a session worker's work.
type item struct {
	ev   chat.MessageEvent
	kind int
	at   time.Time // when the message was created (offers)
	// why is catch-up's verdict on a message it offers (intake.Weigh).
	why intake.Verdict
	// again queues a message older than one queued already (Deliver anyway).
	again bool
	// own marks a prompt of ccbridge's own with a message id (a schedule's
	// post): catch-up never reads it back, so it moves no cursor.
	own bool
}

// lateKind is the custom_id kind of Deliver anyway.
const lateKind = "late"

// catchUpRead bounds reading one channel's history back.
const catchUpRead = 2 * time.Minute

func (r *Router) catchingUp() bool { return r.opt.History != nil && r.opt.Cursors != nil }

// catchUpAge is the catch_up of server's platform.
func (r *Router) catchUpAge(server string) time.Duration {
	cfg := r.conf()
	for _, s := range cfg.Servers {
		if s.Name == server {
			return cfg.CatchUp(s)
		}
	}
	return cfg.Discord.CatchUp.Duration
}

// laterNotice is tellStopped's text with catch-up.
func (r *Router) laterNotice(server, text string) string {
	switch text {
	case notConfirmed:
		return fmt.Sprintf(laterChecked, "this message")
	case notHeard:
		return fmt.Sprintf(laterHeard, r.catchUpAge(server))
	}
	return fmt.Sprintf(laterReached, "this message", r.catchUpAge(server))
}

// handle runs one item and reports whether its message was handled (an
// item of ccbridge's own never is: it moves no cursor).
func (r *Router) handle(tg target, it item) bool {
	switch it.kind {
	case confirmItem:
		r.opt.Log.Info("a message typed before ccbridge stopped had reached Claude", "session", tg.key, "message", it.ev.MessageID)
		r.react(it.ev, "✅")
		return true
	case offerItem:
		r.offer(tg, it)
		return true
	case doneItem:
		return true
	}
	return r.deliver(tg, it) && !it.own
}

// book is the intake's books of this daemon's messages (made on first use:
// tests wire Cursors after New).
func (r *Router) book() *intake.Book {
	r.bookOnce.Do(func() {
		var cursors *state.Collection[state.Cursor]
		if r.catchingUp() {
			cursors = r.opt.Cursors
		}
		r.books = intake.New(cursors)
	})
	return r.books
}

// markHandled moves the message's channel cursor up to it, and forgets it
// as in flight.
func (r *Router) markHandled(ev chat.MessageEvent) {
	if !r.catchingUp() || ev.MessageID == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.ctx), stopNotice)
	defer cancel()
	if err := r.book().Handled(ctx, intake.Of(ev)); err != nil {
		r.opt.Log.Error("could not record a message handled", "channel", ev.ChannelID, "message", ev.MessageID, "err", err)
	}
}

// recordTyped notes the message about to be typed into the pane, so that
// catch-up after a crash asks what Claude received before typing it again.
func (r *Router) recordTyped(key string, it item, prompt string) {
	ev := it.ev
	if !r.catchingUp() || ev.MessageID == "" || it.own {
		return
	}
	if err := r.book().Typed(r.ctx, intake.Of(ev), key, prompt, time.Now()); err != nil {
		r.opt.Log.Error("could not record a message typed", "channel", ev.ChannelID, "message", ev.MessageID, "err", err)
	}
}

// CatchUpChannels lists what to read back after READY on server's bot: its
// project channels (parent ""). Threads wait for the guild's list of
// active threads (CatchUpThreads). Nil without catch-up.
func (r *Router) CatchUpChannels(server string) map[string]string {
	if !r.catchingUp() {
		return nil
	}
	out := map[string]string{}
	for ch, rt := range r.routeTable() {
		if rt.server.Name == server {
			out[ch] = ""
		}
	}
	return out
}

// CatchUpThreads picks, from the guild's active threads (id → parent), the
// ones to read back: every thread under a project channel (one started or
// revived while ccbridge was away included; one without a cursor is read
// with the age rule, as a first start) and every opened folder's thread.
// It also returns the threads of live sessions and opened folders that are
// not active (id → parent), to look up: archived or deleted while it was
// away.
func (r *Router) CatchUpThreads(server string, active map[string]string) (read, check map[string]string) {
	if !r.catchingUp() {
		return nil, nil
	}
	read, check = map[string]string{}, map[string]string{}
	projects := map[string]string{} // project name → channel
	for ch, rt := range r.routeTable() {
		if rt.server.Name == server {
			projects[rt.project.Name] = ch
		}
	}
	folders := map[string]string{} // opened folder's thread → its channel
	for _, o := range opened.Folders(r.opt.Registry, server) {
		folders[o.ThreadID] = o.ChannelID
	}
	for id, parent := range active {
		if _, ok := r.lookup(server, parent); ok {
			read[id] = parent
		} else if p, ok := folders[id]; ok {
			read[id] = p
		}
	}
	regs, err := r.opt.Registry.Sessions.List()
	if err != nil {
		r.opt.Log.Warn("catch-up: some sessions could not be read", "err", err)
	}
	for _, g := range regs {
		// One archived already had its session stopped and its worktree
		// released: deleted since, nothing is left to do.
		if parent, ok := projects[g.Project]; ok && g.Server == server && g.ThreadID != "" && !g.Archived && active[g.ThreadID] == "" {
			check[g.ThreadID] = parent
		}
	}
	for id, parent := range folders {
		if active[id] == "" {
			check[id] = parent
		}
	}
	return read, check
}

// ThreadAway handles a thread ccbridge knows found archived (or deleted)
// after connecting, as the event it missed would have been: its session is
// stopped (a deleted one's released), and its messages are not read back.
// A thread archived already is left as it is.
func (r *Router) ThreadAway(server, threadID, parentID string, deleted bool) {
	if deleted {
		r.HandleThreadDeleted(server, threadID, parentID) // threads.go
		return
	}
	if tg, ok := r.resolve(server, threadID, parentID); ok {
		if g, err := r.opt.Registry.Sessions.Get(tg.key); err == nil && g.Archived {
			return
		}
	}
	r.HandleThreadArchived(server, threadID, parentID)
}

// CatchUp reads back what a channel (or thread) received after the last
// message handled there and queues it for its session (see the top of the
// file). Run it in the channel's queue, before its live messages.
func (r *Router) CatchUp(server, channelID, parentID string) {
	if !r.catchingUp() {
		return
	}
	tg, ok := r.resolve(server, channelID, parentID)
	if !ok {
		return
	}
	log := r.opt.Log.With("server", server, "channel", channelID)
	cur, found, err := r.book().Cursor(server, channelID)
	if err != nil {
		log.Error("catch-up: cannot read the channel's cursor", "err", err)
		return
	}
	// Only a channel ccbridge never handled a message in has history from
	// before catch-up began. A cursor that holds no handled message yet
	// (the daemon died between typing the first one and recording it) is
	// no first start: what is old there was missed, and is offered.
	firstStart := !found
	ctx, cancel := context.WithTimeout(r.ctx, catchUpRead)
	defer cancel()
	held := r.readHeld(ctx, log, server, channelID, parentID, cur)
	msgs, err := r.opt.History.After(ctx, server, channelID, cur.Last)
	if err != nil {
		// The cursor stays: the next READY reads them again.
		log.Error("catch-up: could not read back the messages sent while ccbridge was away", "err", err)
		return
	}
	now, limit := r.now(), r.catchUpAge(server)
	skipTo, blocked, queued, offered := "", false, 0, 0
	for _, m := range append(held, msgs...) {
		ev := m.Event
		ev.Server, ev.ParentID = server, parentID
		id := ev.MessageID
		_, isHeld := cur.Held[id]
		if !state.SnowflakeLess(cur.Last, id) && !isHeld {
			continue
		}
		o, hasOffer := cur.Offers[id]
		v := intake.Weigh(intake.Read{At: m.At, Marked: m.Marked, Wanted: r.wanted(ev), Held: isHeld,
			Clicked: isHeld && hasOffer && o.Used, Typed: cur.Typed != nil && cur.Typed.MessageID == id},
			firstStart, now, limit, func() intake.Receipt { return r.received(*cur.Typed) })
		it := item{ev: ev, at: m.At, why: v}
		switch v.Action {
		case intake.Pass:
			if isHeld {
				r.markHandled(ev) // handled before the cursor was told
			} else if !blocked {
				skipTo = id // none of ccbridge's business, or handled before
			}
			continue
		case intake.PassOld:
			if !blocked {
				skipTo = id // no cursor yet: history from before catch-up began
			}
			continue
		case intake.Confirm:
			it.kind = confirmItem
		case intake.Offer:
			it.kind = offerItem
		}
		if !isHeld {
			blocked = true // the cursor moves past it once the worker is done
		}
		if audio, ok := ev.Voice(); ok && it.kind == deliverItem {
			if r.claim(ev) {
				r.hear(tg, ev, audio, isHeld) // voice.go: transcribed beside the queue, as live
				queued++
			}
			continue
		}
		st := r.enqueueWaiting(tg, it)
		if st == enqueueStopped {
			break // the rest waits for the next start
		}
		if st == enqueued && it.kind == offerItem {
			offered++
		} else if st == enqueued {
			queued++
		}
	}
	if skipTo != "" {
		if err := r.book().Handled(ctx, intake.Ref{Server: server, ChannelID: channelID, MessageID: skipTo}); err != nil {
			log.Error("catch-up: could not move the cursor", "err", err)
		}
	}
	if len(msgs)+len(held) > 0 {
		log.Info("caught up", "read", len(msgs), "in flight", len(held), "queued", queued, "offered", offered)
	}
}

// readHeld reads back, oldest first, the messages that were in flight
// when ccbridge stopped and that the cursor has passed (After returns the
// others). One gone from Discord is forgotten; one that cannot be read now
// waits for the next READY.
func (r *Router) readHeld(ctx context.Context, log *slog.Logger, server, channelID, parentID string, cur state.Cursor) []Missed {
	var ids []string
	for id := range cur.Held {
		if !state.SnowflakeLess(cur.Last, id) {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b string) int {
		if state.SnowflakeLess(a, b) {
			return -1
		}
		return 1
	})
	var out []Missed
	for _, id := range ids {
		m, err := r.opt.History.Message(ctx, server, channelID, id)
		switch {
		case errors.Is(err, intake.ErrGone):
			log.Info("catch-up: a message in flight was deleted meanwhile", "message", id)
			r.markHandled(chat.MessageEvent{Server: server, ChannelID: channelID, ParentID: parentID, MessageID: id})
		case err != nil:
			log.Error("catch-up: could not read back a message in flight", "message", id, "err", err)
		default:
			out = append(out, m)
		}
	}
	return out
}

// wanted is HandleMessage's filter, without its logs: an owner's message
// with something to say, in a channel of a session.
func (r *Router) wanted(ev chat.MessageEvent) bool {
	return ev.Prompt() && (strings.TrimSpace(ev.Content) != "" || len(ev.Attachments) > 0) && r.allowed(ev.Server, ev.Author)
}

// claim takes a voice note, which goes beside the queue (its words into
// it later), for this process, and holds it: messages after it may be
// handled first. False when it was taken already.
func (r *Router) claim(ev chat.MessageEvent) bool {
	if !r.book().Claim(intake.Of(ev)) {
		return false
	}
	r.hold(ev)
	return true
}

// hold records a message in flight, so a restart reads it back.
func (r *Router) hold(ev chat.MessageEvent) {
	if !r.catchingUp() || ev.MessageID == "" {
		return
	}
	if err := r.book().Hold(r.ctx, intake.Of(ev), r.now()); err != nil {
		r.opt.Log.Error("could not record a message in flight", "channel", ev.ChannelID, "message", ev.MessageID, "err", err)
	}
}

// release forgets a message in flight without moving the cursor: it was
// told why not, with its ⚠️.
func (r *Router) release(ev chat.MessageEvent) {
	if !r.catchingUp() || ev.MessageID == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.ctx), stopNotice)
	defer cancel()
	if err := r.book().Release(ctx, intake.Of(ev)); err != nil {
		r.opt.Log.Error("could not record a message handled", "channel", ev.ChannelID, "message", ev.MessageID, "err", err)
	}
}

// settle records a message in flight handled (a voice note cancelled)
// once the messages queued before it are: the cursor must not pass them.
// Should the daemon stop first, it stays in flight and the next start asks
// again.
func (r *Router) settle(tg target, ev chat.MessageEvent) {
	r.tryEnqueue(tg, item{ev: ev, kind: doneItem, again: true})
}

// enqueueWaiting is enqueue for catch-up: it waits while the session's
// queue is full instead of dropping, and tells a stopping daemon nothing
// (the message stays after the cursor, for the next start).
func (r *Router) enqueueWaiting(tg target, it item) int {
	for {
		st := r.tryEnqueue(tg, it)
		if st != enqueueFull {
			return st
		}
		select {
		case <-r.ctx.Done():
			return enqueueStopped
		case <-time.After(100 * time.Millisecond):
		}
	}
}
