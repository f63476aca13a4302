package router

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/intake"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/voice"
)

// Messages in flight (claimed, not handled yet) that newer ones pass: a
// voice note being transcribed or reviewed, a Deliver anyway message queued
// behind newer ones. The cursor moves past them; a restart must not lose
// them.

const (
	voiceID1 = "1300000000000000101"
	textID2  = "1300000000000000102"
)

// stoppable gives r a context the test ends (a SIGTERM), for workers
// started from now on.
func stoppable(r *Router) context.CancelFunc {
	ctx, cancel := context.WithCancel(context.Background())
	r.ctx = ctx
	return cancel
}

// restarted is a new daemon on r's state (registry, store, cursors),
// Discord history and configuration, with fresh sessions, replier and log.
func restarted(t *testing.T, r *Router, files map[string][]byte) (*Router, *fakeSessions, *log) {
	t.Helper()
	// Discord keeps the messages the first daemon posted: the new one's
	// fake starts with them (a click on a button posted before the
	// restart is on that message).
	l := r.opt.Replier.(bindingReplier).Replier.(fittingReplier).Replier.(*fakeReplier).l.carriedOver()
	ss := &fakeSessions{l: l, receipts: 1}
	opt := r.opt
	opt.Sessions, opt.Replier = ss, &fakeReplier{l: l, files: files}
	ctx, cancel := context.WithCancel(context.Background())
	r2 := New(ctx, opt)
	t.Cleanup(func() {
		cancel()
		r2.Wait()
		for _, m := range l.refused {
			t.Errorf("Discord would refuse: %s", m)
		}
	})
	return r2, ss, l
}

// voiceCatchUpRouter is newVoiceRouter with catch-up wired, the cursor at
// 1300000000000000100 and the voice note voiceID1 downloadable.
func voiceCatchUpRouter(t *testing.T, review bool, tr *fakeTranscriber) (*Router, *fakeSessions, *fakeHistory, *log, map[string][]byte) {
	t.Helper()
	r, ss, l := newVoiceRouter(t, review, tr)
	cursors, err := state.OpenCursors(r.opt.Registry.Dir)
	if err != nil {
		t.Fatal(err)
	}
	h := &fakeHistory{}
	r.opt.History, r.opt.Cursors = h, cursors
	if err := intake.New(cursors).Handled(context.Background(), intake.Ref{Server: "home", ChannelID: channel, MessageID: "1300000000000000100"}); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"https://cdn/" + voiceID1: []byte("OggS")}
	r.opt.Replier.(bindingReplier).Replier.(fittingReplier).Replier.(*fakeReplier).files["https://cdn/"+voiceID1] = []byte("OggS")
	return r, ss, h, l, files
}

// sayVoice adds the owner's voice note to the history, sent ago.
func (h *fakeHistory) sayVoice(id string, ago time.Duration) chat.MessageEvent {
	ev := voiceMsg(id)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.msgs = append(h.msgs, Missed{Event: ev, At: time.Now().Add(-ago)})
	return ev
}

// mark gives a message of the history the bot's reaction.
func (h *fakeHistory) mark(id, emoji string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := range h.msgs {
		if h.msgs[i].Event.MessageID == id {
			h.msgs[i].Marked = append(h.msgs[i].Marked, emoji)
		}
	}
}

// A voice note V is being transcribed while the owner's text T is
// delivered (the cursor moves to T); ccbridge stops and tells V it will be
// delivered when back. After the restart V's words are delivered, once.
func TestReview3VoiceNoteBehindTheCursorIsLost(t *testing.T) {
	tr := &fakeTranscriber{words: "the voice note", release: make(chan struct{})}
	r, _, h, l, files := voiceCatchUpRouter(t, false, tr)
	stop := stoppable(r)
	note := h.sayVoice(voiceID1, time.Minute)
	r.HandleMessage(note)
	text := msg("and also check the logs")
	text.MessageID = textID2
	h.say(textID2, text.Content, time.Minute)
	r.HandleMessage(text)
	l.waitFor(t, "react "+textID2+" ✅")
	h.mark(textID2, "✅")
	waitCursor(t, r, textID2)
	stop()
	r.Wait()
	if !slices.Contains(l.all(), "send "+fmt.Sprintf(laterReached, "this message", 15*time.Minute)) {
		t.Fatalf("the voice note was not told it waits: %q", l.all())
	}

	r2, ss2, l2 := restarted(t, r, files)
	r2.opt.Transcriber = &fakeTranscriber{words: "the voice note"}
	r2.CatchUp("home", channel, "")
	l2.waitFor(t, "react "+voiceID1+" ✅")
	r2.CatchUp("home", channel, "") // another READY: nothing more
	time.Sleep(100 * time.Millisecond)
	if got := ss2.deliveredNow(); !slices.Equal(got, []string{"the voice note"}) {
		t.Fatalf("delivered after the restart %q, want the voice note's words once", got)
	}
	if c := r2.cursor(t); len(c.Held) != 0 || c.Last != textID2 {
		t.Errorf("cursor after delivery = %+v, want nothing held, Last at the text", c)
	}
}

// A Deliver anyway click whose message waits behind a newer one when
// ccbridge stops: the offer is put back and the notice says so (not "it
// will be delivered"); after the restart the offer works, once.
func TestReview3DeliverAnywayLostAtAStop(t *testing.T) {
	r, ss, h, l, store := catchUpRouter(t, "1300000000000000100")
	stop := stoppable(r)
	// The session Claude runs in: what it received can be told.
	if _, err := store.Sessions.Update(context.Background(), "home-api", func(s *state.Session) error {
		s.Server, s.Project, s.ChannelID = "home", "api", channel
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	h.say("1300000000000000101", "the old one", 20*time.Minute)
	r.CatchUp("home", channel, "")
	l.waitFor(t, "react 1300000000000000101 ⚠️")
	h.mark("1300000000000000101", "⚠️")
	ss.dialogs = 1000 // the live one waits for a dialog: the old one queues behind it
	live := msg("a live one")
	live.MessageID = textID2
	h.say(textID2, live.Content, time.Second)
	r.HandleMessage(live)
	l.waitFor(t, "dialog")
	id, err := chat.ID{Instance: "inst1", Kind: lateKind, Args: []string{"1300000000000000101"}}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	click := func(r *Router, l *log) { // on the offer as the router last drew it
		at := l.carrying(id)
		r.HandleComponent(l.on(channel, at, id), fakeResponder{l: l, at: at})
	}
	click(r, l)
	waitOp(t, l, "update 📨 Delivering")
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		r.mu.Lock()
		n := len(r.workers["home-api"])
		r.mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the old one was never queued")
		}
	}
	stop()
	r.Wait()
	later := "send " + fmt.Sprintf(laterReached, "this message", 15*time.Minute)
	if n := strings.Count(strings.Join(l.all(), "\n"), later); n != 1 {
		t.Fatalf("%d promises of delivery, want 1 (the live one's): %q", n, l.all())
	}
	back := waitOp(t, l, "post "+channel+" ⏸️ ccbridge stopped before <ref:"+channel+"/1300000000000000101|this message>")
	if !strings.Contains(back, "Deliver anyway") {
		t.Errorf("the put-back notice does not say the offer is open again: %q", back)
	}

	r2, ss2, l2 := restarted(t, r, nil)
	r2.CatchUp("home", channel, "")
	l2.waitFor(t, "react "+textID2+" ✅")
	click(r2, l2)
	l2.waitFor(t, "react 1300000000000000101 ✅")
	click(r2, l2)
	l2.waitFor(t, "respond ephemeral=true "+intake.OfferUsedText)
	time.Sleep(50 * time.Millisecond)
	if got := ss2.deliveredNow(); !slices.Equal(got, []string{"a live one", "the old one"}) {
		t.Fatalf("delivered after the restart %q", got)
	}
}

// A voice note whose transcript waits for review when ccbridge crashes is
// transcribed again after the restart and its review offered again, saying
// why; Send delivers it once.
func TestVoiceReviewPendingAtACrashIsOfferedAgain(t *testing.T) {
	r, _, h, l, files := voiceCatchUpRouter(t, true, &fakeTranscriber{words: "the voice note"})
	note := h.sayVoice(voiceID1, time.Minute)
	r.HandleMessage(note)
	waitOp(t, l, "post "+channel+" 🎙️ Transcript")
	text := msg("and also check the logs")
	text.MessageID = textID2
	h.say(textID2, text.Content, time.Minute)
	r.HandleMessage(text)
	l.waitFor(t, "react "+textID2+" ✅")
	h.mark(textID2, "✅")
	waitCursor(t, r, textID2)

	// A crash: the first daemon says nothing more (its state is as it was).
	r2, ss2, l2 := restarted(t, r, files)
	r2.CatchUp("home", channel, "")
	review := waitOp(t, l2, "post "+channel+" 🎙️")
	if !strings.Contains(review, "ccbridge restarted") || !strings.Contains(review, ">>> the voice note") {
		t.Fatalf("review after the restart = %q", review)
	}
	voiceClick(r2, l2, voiceID(t, voice.Send, voiceID1), owner)
	l2.waitFor(t, "react "+voiceID1+" ✅")
	if got := ss2.deliveredNow(); !slices.Equal(got, []string{"the voice note"}) {
		t.Fatalf("delivered %q", got)
	}
}

// A review cancelled or answered with a failure is handled: nothing stays
// held for the next start.
func TestCancelledVoiceNoteIsNotHeld(t *testing.T) {
	r, _, h, l, _ := voiceCatchUpRouter(t, true, &fakeTranscriber{words: "never mind"})
	note := h.sayVoice(voiceID1, time.Minute)
	r.HandleMessage(note)
	waitOp(t, l, "post "+channel+" 🎙️ Transcript")
	if c := r.cursor(t); len(c.Held) != 1 {
		t.Fatalf("a voice note in review is not held: %+v", c)
	}
	voiceClick(r, l, voiceID(t, voice.Cancel, voiceID1), owner)
	waitOp(t, l, "update 🎙️ Cancelled")
	waitCursor(t, r, voiceID1)
	if c := r.cursor(t); len(c.Held) != 0 {
		t.Fatalf("held after Cancel: %+v", c)
	}
}

// With review on, a voice note being transcribed at a stop is told what the
// restart does: transcribe it again and show the transcript, not deliver
// it; and it does so.
func TestVoiceNoteTranscribingAtAStopWithReviewIsShownAgain(t *testing.T) {
	tr := &fakeTranscriber{words: "the voice note", release: make(chan struct{})}
	r, _, h, l, files := voiceCatchUpRouter(t, true, tr)
	stop := stoppable(r)
	r.HandleMessage(h.sayVoice(voiceID1, time.Minute))
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		tr.mu.Lock()
		n := len(tr.files)
		tr.mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("never transcribed")
		}
	}
	stop()
	r.Wait()
	if !slices.Contains(l.all(), "send "+fmt.Sprintf(laterHeard, 15*time.Minute)) {
		t.Fatalf("notice at the stop: %q", l.all())
	}
	r2, _, l2 := restarted(t, r, files)
	r2.opt.Transcriber = &fakeTranscriber{words: "the voice note"}
	r2.CatchUp("home", channel, "")
	if review := waitOp(t, l2, "post "+channel+" 🎙️"); !strings.Contains(review, "not sent yet") {
		t.Fatalf("after the restart: %q", review)
	}
}

// A message in flight at a stop that is older than catch_up when ccbridge
// is back is offered, saying it was on its way (not missed).
func TestOldMessageInFlightIsOfferedAsSuch(t *testing.T) {
	r, _, h, l, files := voiceCatchUpRouter(t, false, &fakeTranscriber{words: "never"})
	h.sayVoice(voiceID1, time.Hour)
	if err := r.book().Hold(context.Background(), intake.Ref{Server: "home", ChannelID: channel, MessageID: voiceID1}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := r.book().Handled(context.Background(), intake.Ref{Server: "home", ChannelID: channel, MessageID: textID2}); err != nil {
		t.Fatal(err)
	}
	r2, ss2, l2 := restarted(t, r, files)
	r2.CatchUp("home", channel, "")
	l2.waitFor(t, "react "+voiceID1+" ⚠️")
	if offer := waitOp(t, l2, "post "+channel+" ⚠️"); !strings.Contains(offer, "ccbridge stopped before <ref:"+channel+"/1300000000000000101|this message>") {
		t.Fatalf("offer = %q", offer)
	}
	if len(ss2.deliveredNow()) != 0 || len(l.all()) != 0 {
		t.Fatalf("delivered %q", ss2.deliveredNow())
	}
}

// A Deliver anyway click whose message had not reached Claude when ccbridge
// crashed: the restart offers it again (its ⚠️ is the offer's, not a sign
// it was handled), and the offer delivers it once.
func TestDeliverAnywayInterruptedByACrashIsOfferedAgain(t *testing.T) {
	r, ss, h, l, store := catchUpRouter(t, "1300000000000000100")
	if _, err := store.Sessions.Update(context.Background(), "home-api", func(s *state.Session) error {
		s.Server, s.Project, s.ChannelID = "home", "api", channel
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	h.say("1300000000000000101", "the old one", 20*time.Minute)
	r.CatchUp("home", channel, "")
	l.waitFor(t, "react 1300000000000000101 ⚠️")
	h.mark("1300000000000000101", "⚠️")
	ss.dialogs = 1000
	live := msg("a live one")
	live.MessageID = textID2
	h.say(textID2, live.Content, time.Second)
	r.HandleMessage(live)
	l.waitFor(t, "dialog")
	id, err := chat.ID{Instance: "inst1", Kind: lateKind, Args: []string{"1300000000000000101"}}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	click := func(r *Router, l *log) { // on the offer as the router last drew it
		at := l.carrying(id)
		r.HandleComponent(l.on(channel, at, id), fakeResponder{l: l, at: at})
	}
	click(r, l)
	waitOp(t, l, "update 📨 Delivering")

	// A crash: the first daemon says nothing more.
	r2, ss2, l2 := restarted(t, r, nil)
	r2.CatchUp("home", channel, "")
	l2.waitFor(t, "react "+textID2+" ✅")
	waitOp(t, l2, "post "+channel+" ⚠️ ccbridge stopped before <ref:"+channel+"/1300000000000000101|this message>")
	click(r2, l2)
	l2.waitFor(t, "react 1300000000000000101 ✅")
	time.Sleep(50 * time.Millisecond)
	if got := ss2.deliveredNow(); !slices.Equal(got, []string{"a live one", "the old one"}) {
		t.Fatalf("delivered after the restart %q", got)
	}
}
