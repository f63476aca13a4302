package router

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/intake"
	"github.com/ccbridge/ccbridge/internal/state"
)

// fakeHistory is a channel's history on Discord.
type fakeHistory struct {
	mu    sync.Mutex
	msgs  []Missed // oldest first
	reads []string // the afterID of each After
	// block, when set before a read starts, holds Message until it is
	// closed or the read's context ends.
	block chan struct{}
}

func (h *fakeHistory) After(_ context.Context, _, ch, after string) ([]Missed, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.reads = append(h.reads, after)
	var out []Missed
	for _, m := range h.msgs {
		if m.Event.ChannelID == ch && state.SnowflakeLess(after, m.Event.MessageID) {
			out = append(out, m)
		}
	}
	if after == "" && len(out) > 100 {
		out = out[len(out)-100:]
	}
	return out, nil
}

func (h *fakeHistory) Message(ctx context.Context, _, ch, id string) (Missed, error) {
	if h.block != nil {
		select {
		case <-h.block:
		case <-ctx.Done():
		}
		if err := ctx.Err(); err != nil {
			return Missed{}, err
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, m := range h.msgs {
		if m.Event.MessageID == id && m.Event.ChannelID == ch {
			return m, nil
		}
	}
	return Missed{}, fmt.Errorf("HTTP 404 Not Found, {\"message\": \"Unknown Message\", \"code\": 10008}")
}

// say adds an owner's message, sent ago.
func (h *fakeHistory) say(id, text string, ago time.Duration, marked ...string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.msgs = append(h.msgs, Missed{Event: chat.MessageEvent{ChannelID: channel, MessageID: id, Author: chat.User{ID: owner}, Content: text},
		At: time.Now().Add(-ago), Marked: marked})
}

// catchUpRouter is newRouter with catch-up wired (catch_up is the default
// 15m), the channel's cursor at last ("" for none).
func catchUpRouter(t *testing.T, last string) (*Router, *fakeSessions, *fakeHistory, *log, *state.Store) {
	t.Helper()
	r, ss, _, l, store := newRouter(t)
	cursors, err := state.OpenCursors(r.opt.Registry.Dir)
	if err != nil {
		t.Fatal(err)
	}
	h := &fakeHistory{}
	r.opt.History, r.opt.Cursors = h, cursors
	if last != "" {
		if err := intake.New(cursors).Handled(context.Background(), intake.Ref{Server: "home", ChannelID: channel, MessageID: last}); err != nil {
			t.Fatal(err)
		}
	}
	return r, ss, h, l, store
}

func (r *Router) cursor(t *testing.T) state.Cursor {
	t.Helper()
	c, err := r.opt.Cursors.Get(state.CursorKey("home", channel))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// waitCursor waits until the channel's cursor is at id.
func waitCursor(t *testing.T, r *Router, id string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for r.cursor(t).Last != id {
		if time.Now().After(deadline) {
			t.Fatalf("cursor at %q, want %q", r.cursor(t).Last, id)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func delivered(ops []string) []string {
	var out []string
	for _, op := range ops {
		if strings.HasPrefix(op, "deliver ") {
			out = append(out, op)
		}
	}
	return out
}

// Messages sent while ccbridge was away reach Claude in order, once each,
// with their ✅: a stranger's and one handled before (its ✅) are skipped,
// the same message arriving live afterwards is not delivered again, and
// the cursor ends at the last one.
func TestCatchUpDeliversWhatWasMissedInOrderOnce(t *testing.T) {
	r, _, h, l, _ := catchUpRouter(t, "1300000000000000100")
	h.say("1300000000000000099", "before the cursor", time.Minute)
	h.say("1300000000000000101", "first", 3*time.Minute)
	h.mu.Lock()
	h.msgs = append(h.msgs, Missed{Event: chat.MessageEvent{ChannelID: channel, MessageID: "1300000000000000102", Author: chat.User{ID: "555"}, Content: "stranger"}, At: time.Now()})
	h.mu.Unlock()
	h.say("1300000000000000103", "handled before", 2*time.Minute, "✅")
	h.say("1300000000000000104", "second", time.Minute)
	r.CatchUp("home", channel, "")
	live := chat.MessageEvent{Server: "home", ChannelID: channel, MessageID: "1300000000000000104", Author: chat.User{ID: owner}, Content: "second"}
	r.HandleMessage(live) // read back and then arriving live: once
	l.waitFor(t, "react 1300000000000000104 ✅")
	waitCursor(t, r, "1300000000000000104")
	want := []string{`deliver home-api "first"`, `deliver home-api "second"`}
	if got := delivered(l.all()); !slices.Equal(got, want) {
		t.Fatalf("delivered %q, want %q", got, want)
	}
	if !slices.Contains(l.all(), "react 1300000000000000101 ✅") {
		t.Errorf("no receipt for the first: %q", l.all())
	}
	r.CatchUp("home", channel, "") // a second READY: nothing new
	next := chat.MessageEvent{Server: "home", ChannelID: channel, MessageID: "1300000000000000105", Author: chat.User{ID: owner}, Content: "third"}
	r.HandleMessage(next)
	l.waitFor(t, "react 1300000000000000105 ✅")
	if got := delivered(l.all()); len(got) != 3 || got[2] != `deliver home-api "third"` {
		t.Fatalf("delivered %q", got)
	}
	if h.reads[1] != "1300000000000000104" {
		t.Errorf("the second catch-up read after %q, want after the last handled", h.reads[1])
	}
}

// A message older than catch_up gets ⚠️ and a Deliver anyway offer; only
// its author can use it, once, before it expires.
func TestCatchUpOffersOldMessagesDeliverAnywayOnce(t *testing.T) {
	r, _, h, l, _ := catchUpRouter(t, "1300000000000000100")
	h.say("1300000000000000101", "old news", 20*time.Minute)
	h.say("1300000000000000102", "fresh", time.Minute)
	r.CatchUp("home", channel, "")
	l.waitFor(t, "react 1300000000000000102 ✅")
	ops := l.all()
	if got := delivered(ops); !slices.Equal(got, []string{`deliver home-api "fresh"`}) {
		t.Fatalf("delivered %q", got)
	}
	if !slices.Contains(ops, "react 1300000000000000101 ⚠️") || !slices.ContainsFunc(ops, func(op string) bool {
		// A reference each front end makes a link (Discord: the jump URL, discord.TestMessageRefsBecomeJumpLinks).
		return strings.HasPrefix(op, "post "+channel+" ⚠️ <ref:"+channel+"/1300000000000000101|This message> was sent 20m0s ago")
	}) {
		t.Fatalf("no ⚠️ and offer: %q", ops)
	}
	id, err := chat.ID{Instance: "inst1", Kind: lateKind, Args: []string{"1300000000000000101"}}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	offer := l.last() // the offer's message, as posted
	if buttonOf(t, l.message(t, offer), "Deliver anyway") != id {
		t.Fatalf("the offer is %+v", l.message(t, offer))
	}
	click := func(user string) {
		ev := l.on(channel, offer, id)
		ev.User = chat.User{ID: user}
		r.HandleComponent(ev, fakeResponder{l: l, at: offer})
	}
	r.opt.Config.Servers[0].OwnerIDs = append(r.opt.Config.Servers[0].OwnerIDs, "777")
	r.Reconfigure(r.opt.Config)
	click("777")
	l.waitFor(t, "respond ephemeral=true "+intake.OfferNotYoursText)
	click(owner)
	l.waitFor(t, "react 1300000000000000101 ✅")
	// A second click (a double tap: the message shows no button any more)
	// delivers nothing.
	click(owner)
	l.waitFor(t, "respond ephemeral=true "+intake.OfferUsedText)
	time.Sleep(50 * time.Millisecond)
	if got := delivered(l.all()); !slices.Equal(got, []string{`deliver home-api "fresh"`, `deliver home-api "old news"`}) {
		t.Fatalf("delivered %q", got)
	}
	if !slices.ContainsFunc(l.all(), func(op string) bool {
		return strings.HasPrefix(op, "update 📨 Delivering") && strings.HasSuffix(op, "rows=0")
	}) {
		t.Errorf("the offer's button was not removed: %q", l.all())
	}

	// Another offer, clicked after it expired (prompt_timeout is 1s here).
	h.say("1300000000000000103", "older still", time.Hour)
	r.CatchUp("home", channel, "")
	l.waitFor(t, "react 1300000000000000103 ⚠️")
	r.now = func() time.Time { return time.Now().Add(2 * time.Second) }
	id, _ = chat.ID{Instance: "inst1", Kind: lateKind, Args: []string{"1300000000000000103"}}.Encode()
	offer = l.last()
	click(owner)
	l.waitFor(t, "respond ephemeral=true "+intake.OfferGoneText)
	if got := delivered(l.all()); len(got) != 2 {
		t.Fatalf("an expired offer delivered: %q", got)
	}
}

// Without a cursor (the first start with catch-up) old history is left
// alone; what is younger than catch_up is delivered.
func TestFirstCatchUpLeavesOldHistoryAlone(t *testing.T) {
	r, _, h, l, _ := catchUpRouter(t, "")
	h.say("1300000000000000101", "from last week", 7*24*time.Hour)
	h.say("1300000000000000102", "just now", 10*time.Second)
	r.CatchUp("home", channel, "")
	l.waitFor(t, "react 1300000000000000102 ✅")
	waitCursor(t, r, "1300000000000000102")
	if ops := l.all(); !slices.Equal(delivered(ops), []string{`deliver home-api "just now"`}) || slices.Contains(ops, "react 1300000000000000101 ⚠️") {
		t.Fatalf("ops = %q", ops)
	}
}

// A message typed but unconfirmed when ccbridge died is checked against
// what Claude received: its UserPromptSubmit record or the transcript
// (then only its ✅), neither (typed again), or no session record at all
// (cannot tell: offered, not typed).
func TestCatchUpChecksAMessageTypedAtACrash(t *testing.T) {
	for _, tc := range []struct {
		name    string
		record  func(t *testing.T, s *state.Session, at time.Time)
		noRec   bool
		typed   bool
		confirm bool
	}{
		{name: "receipt", confirm: true, record: func(_ *testing.T, s *state.Session, at time.Time) {
			s.AddPrompt(state.Prompt{At: at.Add(time.Second), Text: "  do   the\nthing "})
		}},
		{name: "transcript", confirm: true, record: func(t *testing.T, s *state.Session, at time.Time) {
			p := filepath.Join(t.TempDir(), "t.jsonl")
			line := fmt.Sprintf(`{"type":"user","isSidechain":false,"timestamp":%q,"message":{"role":"user","content":"do the thing"}}`, at.Add(time.Second).UTC().Format(time.RFC3339Nano))
			old := fmt.Sprintf(`{"type":"user","timestamp":%q,"message":{"role":"user","content":"do the thing"}}`, at.Add(-time.Hour).UTC().Format(time.RFC3339Nano))
			if err := os.WriteFile(p, []byte(old+"\n"+line+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			s.TranscriptPath = p
		}},
		{name: "only an older one in the transcript", typed: true, record: func(t *testing.T, s *state.Session, at time.Time) {
			p := filepath.Join(t.TempDir(), "t.jsonl")
			old := fmt.Sprintf(`{"type":"user","timestamp":%q,"message":{"role":"user","content":"do the thing"}}`, at.Add(-time.Hour).UTC().Format(time.RFC3339Nano))
			if err := os.WriteFile(p, []byte(old+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			s.TranscriptPath = p
			s.AddPrompt(state.Prompt{At: at.Add(-time.Hour), Text: "do the thing", Boot: 1})
		}},
		{name: "nothing received", typed: true, record: func(*testing.T, *state.Session, time.Time) {}},
		{name: "no session record", noRec: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _, h, l, store := catchUpRouter(t, "1300000000000000100")
			at := time.Now().Add(-time.Minute)
			if _, err := r.opt.Cursors.Update(context.Background(), state.CursorKey("home", channel), func(c *state.Cursor) error {
				c.Typed = &state.Typed{MessageID: "1300000000000000101", Session: "home-api", Text: "do the thing", At: at}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if !tc.noRec {
				if _, err := store.Sessions.Update(context.Background(), "home-api", func(s *state.Session) error {
					s.Server, s.Project, s.ChannelID = "home", "api", channel
					tc.record(t, s, at)
					return nil
				}); err != nil {
					t.Fatal(err)
				}
			}
			h.say("1300000000000000101", "do the thing", time.Minute)
			r.CatchUp("home", channel, "")
			switch {
			case tc.confirm:
				l.waitFor(t, "react 1300000000000000101 ✅")
			case tc.typed:
				l.waitFor(t, `deliver home-api "do the thing"`)
				l.waitFor(t, "react 1300000000000000101 ✅")
			default:
				l.waitFor(t, "react 1300000000000000101 ⚠️")
				if !slices.ContainsFunc(l.all(), func(op string) bool { return strings.Contains(op, "cannot tell whether Claude received it") }) {
					t.Fatalf("no offer: %q", l.all())
				}
			}
			waitCursor(t, r, "1300000000000000101")
			if got := delivered(l.all()); tc.typed != (len(got) == 1) || len(got) > 1 {
				t.Fatalf("delivered %q", got)
			}
			if c := r.cursor(t); c.Typed != nil {
				t.Errorf("typed record left: %+v", c.Typed)
			}
		})
	}
}

// Live messages move the cursor once handled, and the message typed is
// recorded until its receipt.
func TestLiveMessagesMoveTheCursor(t *testing.T) {
	r, ss, _, l, _ := catchUpRouter(t, "")
	ss.hold = true // no receipt: the message stays typed
	ev := msg("hello")
	ev.MessageID = "1300000000000000201"
	r.HandleMessage(ev)
	l.waitFor(t, `deliver home-api "hello"`)
	deadline := time.Now().Add(5 * time.Second)
	for c, _ := r.opt.Cursors.Get(state.CursorKey("home", channel)); c.Typed == nil || c.Typed.MessageID != ev.MessageID; c, _ = r.opt.Cursors.Get(state.CursorKey("home", channel)) {
		if time.Now().After(deadline) {
			t.Fatalf("typed message not recorded: %+v", c)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if c := r.cursor(t); c.Last != "" {
		t.Fatalf("cursor moved before the receipt: %+v", c)
	}
}

// With catch-up, messages the daemon could not deliver before it stopped
// keep no mark (a ⚠️ would say handled) and are told they will be
// delivered later; the cursor stays before them.
func TestStopWithCatchUpLeavesMessagesForLater(t *testing.T) {
	r, ss, _, l, _ := catchUpRouter(t, "1300000000000000100")
	ctx, cancel := context.WithCancel(context.Background())
	r.ctx = ctx
	ss.dialogs = 1000
	first := msg("held by the dialog")
	first.MessageID = "1300000000000000101"
	r.HandleMessage(first)
	second := msg("queued behind it")
	second.MessageID = "1300000000000000102"
	r.HandleMessage(second)
	l.waitFor(t, "dialog")
	cancel()
	r.Wait()
	got := l.all()
	if slices.ContainsFunc(got, func(op string) bool { return strings.HasPrefix(op, "react 13") && strings.HasSuffix(op, "⚠️") }) {
		t.Fatalf("marked ⚠️: %q", got)
	}
	want := "send " + fmt.Sprintf(laterReached, "this message", 15*time.Minute)
	if n := strings.Count(strings.Join(got, "\n"), want); n != 2 {
		t.Fatalf("%d notices %q: %q", n, want, got)
	}
	if c := r.cursor(t); c.Last != "1300000000000000100" {
		t.Fatalf("cursor moved to %q", c.Last)
	}
}

// A message dropped because its session's queue is full is marked ⚠️ (it
// was told to be sent again), so catch-up never delivers it besides the
// copy sent again.
func TestFullQueueMarksTheDroppedMessage(t *testing.T) {
	r, ss, _, l, _ := catchUpRouter(t, "")
	ss.hold = true // the first message waits for its receipt: the rest queue up
	var last string
	for i := range queuePerSession + 2 {
		ev := msg(fmt.Sprintf("m%d", i))
		ev.MessageID = fmt.Sprintf("13000000000000%05d", i)
		last = ev.MessageID
		r.HandleMessage(ev)
		if i == 0 {
			l.waitFor(t, `deliver home-api "m0"`) // the worker holds it: 64 more fill the queue
		}
	}
	l.waitFor(t, "react "+last+" ⚠️")
	if !slices.ContainsFunc(l.all(), func(op string) bool { return strings.HasPrefix(op, "send ⚠️ Too many messages") }) {
		t.Fatalf("ops = %q", l.all())
	}
}

// A voice note missed while ccbridge was away is transcribed, as one
// arriving live is (never typed as a file), once even if it also arrives
// live; its words take the ✅ and move the cursor.
func TestCatchUpTranscribesAMissedVoiceNoteOnce(t *testing.T) {
	tr := &fakeTranscriber{words: "the voice note"}
	r, ss, l := newVoiceRouter(t, false, tr)
	cursors, err := state.OpenCursors(r.opt.Registry.Dir)
	if err != nil {
		t.Fatal(err)
	}
	h := &fakeHistory{}
	r.opt.History, r.opt.Cursors = h, cursors
	note := voiceMsg("v1")
	h.msgs = append(h.msgs, Missed{Event: note, At: time.Now().Add(-time.Minute)})
	r.CatchUp("home", channel, "")
	r.HandleMessage(note) // also live: claimed already
	l.waitFor(t, "react v1 ✅")
	waitCursor(t, r, "v1")
	time.Sleep(50 * time.Millisecond)
	if got := ss.deliveredNow(); !slices.Equal(got, []string{"the voice note"}) {
		t.Fatalf("delivered %q", got)
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if len(tr.files) != 1 {
		t.Fatalf("transcribed %d times", len(tr.files))
	}
}

// A prompt of ccbridge's own (a schedule's post) moves no cursor and is not
// recorded as typed: catch-up never reads it back, and a cursor moved past
// an owner's message still on its way would lose that one at a crash.
func TestOwnPromptsMoveNoCursor(t *testing.T) {
	r, _, _, l, _ := catchUpRouter(t, "")
	tg, ok := r.resolve("home", channel, "")
	if !ok {
		t.Fatal("no target")
	}
	ev := msg("scheduled")
	ev.MessageID = "1300000000000000401"
	r.enqueue(tg, item{ev: ev, own: true})
	l.waitFor(t, "react 1300000000000000401 ✅")
	time.Sleep(50 * time.Millisecond)
	if c, err := r.opt.Cursors.Get(state.CursorKey("home", channel)); err == nil {
		t.Fatalf("cursor = %+v, want none", c)
	}
}

// A channel whose first message was typed but not yet recorded handled when
// ccbridge died is no first start: an old message missed meanwhile is
// offered, not left alone (it was lost without a word before).
func TestCatchUpAfterACrashBeforeTheFirstCursorOffersOldMessages(t *testing.T) {
	r, _, h, l, _ := catchUpRouter(t, "")
	h.say("1300000000000000101", "the first, typed", time.Minute)
	h.say("1300000000000000102", "sent while down, long ago", 20*time.Minute)
	if _, err := r.opt.Cursors.Update(context.Background(), state.CursorKey("home", channel), func(c *state.Cursor) error {
		c.Server, c.ChannelID = "home", channel
		c.Typed = &state.Typed{MessageID: "1300000000000000100", Session: "home-api", Text: "warm", At: time.Now().Add(-time.Hour)}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	r.CatchUp("home", channel, "")
	l.waitFor(t, "react 1300000000000000102 ⚠️")
}
