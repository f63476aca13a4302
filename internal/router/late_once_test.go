package router

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/intake"
)

// A Deliver anyway clicked (on an offer of an earlier run) and queued
// behind a busy turn is not offered again by a catch-up that runs
// meanwhile (a READY after lost events): it is delivered once, with no
// "not delivered" notice (review of 2026-11-28: it was typed twice).
func TestDeliverAnywayQueuedIsNotOfferedAgainByCatchUp(t *testing.T) {
	r, ss, h, l, _ := catchUpRouter(t, "1300000000000000100")
	gate := make(chan struct{})
	opened := false
	open := func() {
		if !opened {
			opened = true
			close(gate)
		}
	}
	t.Cleanup(open)
	r.opt.Sessions = gatedSessions{ss, gate}
	h.say("1300000000000000101", "old one", 20*time.Minute)
	old := chat.MessageEvent{Server: "home", ChannelID: channel, MessageID: "1300000000000000101", Author: chat.User{ID: owner}, Content: "old one"}
	ctx := context.Background()
	if err := r.book().Offer(ctx, intake.Of(old), owner, time.Now(), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := r.postOffer(ctx, old, "⚠️ offered by the earlier run"); err != nil {
		t.Fatal(err)
	}
	offer := l.last()
	id, _ := chat.ID{Instance: "inst1", Kind: lateKind, Args: []string{old.MessageID}}.Encode()
	busy := msg("busy")
	busy.MessageID = "1300000000000000102"
	h.say(busy.MessageID, "busy", 0)
	r.HandleMessage(busy)
	l.waitFor(t, `deliver home-api "busy"`)
	r.HandleComponent(l.on(channel, offer, id), fakeResponder{l: l, at: offer})
	waitOp(t, l, "update 📨 Delivering")
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		r.mu.Lock()
		n := len(r.workers["home-api"])
		r.mu.Unlock()
		if n == 1 {
			break // the old one waits behind the busy turn
		}
		if time.Now().After(deadline) {
			t.Fatal("the old one was never queued")
		}
	}
	r.CatchUp("home", channel, "")
	open()
	l.waitFor(t, "react 1300000000000000101 ✅")
	time.Sleep(300 * time.Millisecond)
	for _, op := range l.all() {
		if strings.Contains(op, "The offer is open again") {
			t.Fatalf("offered again after it was queued: %q", l.all())
		}
	}
	if n := strings.Count(strings.Join(delivered(l.all()), "\n"), `deliver home-api "old one"`); n != 1 {
		t.Fatalf("delivered %d times: %q", n, delivered(l.all()))
	}
}

// A stop while Deliver anyway reads its message back puts the offer back
// (and says so) instead of forgetting the message (review of 2026-11-28).
func TestStopWhileDeliverAnywayReadsBackPutsTheOfferBack(t *testing.T) {
	r, _, h, l, _ := catchUpRouter(t, "1300000000000000100")
	stop := stoppable(r)
	old := chat.MessageEvent{Server: "home", ChannelID: channel, MessageID: "1300000000000000101", Author: chat.User{ID: owner}, Content: "old one"}
	h.say(old.MessageID, "old one", 20*time.Minute)
	ctx := context.Background()
	if err := r.book().Offer(ctx, intake.Of(old), owner, time.Now(), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := r.postOffer(ctx, old, "⚠️ offered"); err != nil {
		t.Fatal(err)
	}
	offer := l.last()
	id, _ := chat.ID{Instance: "inst1", Kind: lateKind, Args: []string{old.MessageID}}.Encode()
	h.block = make(chan struct{}) // the read back waits until the stop
	r.HandleComponent(l.on(channel, offer, id), fakeResponder{l: l, at: offer})
	waitOp(t, l, "update 📨 Delivering")
	stop()
	close(h.block)
	r.Wait()
	waitOp(t, l, "post "+channel+" ⏸️ ccbridge stopped before")
	if c := r.cursor(t); c.Offers[old.MessageID].Used {
		t.Fatalf("after the stop the offer is spent: %+v", c.Offers[old.MessageID])
	}
}
