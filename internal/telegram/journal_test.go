package telegram

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/intake"
)

func TestJournalIsCatchUpsHistory(t *testing.T) {
	w := newWorld(t)
	h := newRecorder()
	stop := runBot(t, w, w.p, h, Options{IsOwner: w.onlyOwner})
	ch, thread := w.topic("api")
	first := w.tg.OwnerText(thread, "first")
	second := w.tg.OwnerDocument(thread, "a.txt", []byte("a"), "second")
	h.waitFor(t, "two messages", func(r *recorder) bool { return len(r.messages) == 2 })
	stop()
	ctx := context.Background()
	if err := w.p.React(ctx, ch, MessageID(w.tg.ChatID, first.MessageID), "✅"); err != nil {
		t.Fatal(err)
	}
	j := w.p.Journal()
	all, err := j.After(ctx, "phone", ch, "")
	if err != nil || len(all) != 2 {
		t.Fatalf("journal: %+v %v", all, err)
	}
	if all[0].Event.Content != "first" || !slices.Equal(all[0].Marked, []string{"✅"}) || all[1].Event.Attachments[0].Name != "a.txt" ||
		all[0].At.Unix() != first.Date {
		t.Errorf("journal: %+v", all)
	}
	after, _ := j.After(ctx, "phone", ch, MessageID(w.tg.ChatID, first.MessageID))
	if len(after) != 1 || after[0].Event.MessageID != MessageID(w.tg.ChatID, second.MessageID) {
		t.Errorf("after the first: %+v", after)
	}
	if _, err := j.Message(ctx, "phone", ch, "424242"); !errors.Is(err, intake.ErrGone) {
		t.Errorf("a message not journaled: %v", err)
	}

	// A restart: the core's catch-up runs on start (before the first poll:
	// runBot returns once the bot polls).
	c := &catcher{recorder: newRecorder(), j: j, w: w, ch: ch}
	runBot(t, w, w.p, c, Options{IsOwner: w.onlyOwner})
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.read) != 2 || c.read[0] != MessageID(w.tg.ChatID, first.MessageID) {
		t.Errorf("catch-up read %v", c.read)
	}
}

// catcher is a Handler with the core's catch-up over the journal.
type catcher struct {
	*recorder
	j    *Journal
	w    *world
	ch   string // the project channel the core names
	mu   sync.Mutex
	read []string
}

func (c *catcher) CatchUpChannels(string) map[string]string {
	return map[string]string{c.ch: ""}
}

func (c *catcher) CatchUp(server, channelID, _ string) {
	missed, _ := c.j.After(context.Background(), server, channelID, "")
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range missed {
		c.read = append(c.read, m.Event.MessageID)
	}
}

// What an owner sent while ccbridge was away comes with the first poll;
// it goes to the core's catch-up (its age rule, once), not in as if just
// sent, and the topics ccbridge opened are read back with their parents.
func TestBotHandsWhatWasSentWhileAwayToCatchUp(t *testing.T) {
	w := newWorld(t)
	ch, thread := w.topic("api")
	away := w.tg.OwnerText(thread, "sent while away")
	time.Sleep(time.Until(time.Unix(away.Date+1, 0))) // the bot starts a second later
	c := &catcher{recorder: newRecorder(), j: w.p.Journal(), w: w, ch: ch}
	runBot(t, w, w.p, c, Options{IsOwner: w.onlyOwner})
	live := w.tg.OwnerText(thread, "sent live")
	c.waitFor(t, "the live message", func(r *recorder) bool { return len(r.messages) == 1 })
	c.mu.Lock()
	defer c.mu.Unlock()
	if got := c.recorder.messages[0].MessageID; got != MessageID(w.tg.ChatID, live.MessageID) {
		t.Errorf("handed in as live: %s, want only %d", got, live.MessageID)
	}
	if !slices.Contains(c.read, MessageID(w.tg.ChatID, away.MessageID)) {
		t.Errorf("catch-up read %v, not the message sent while away (%d) in %s", c.read, away.MessageID, ch)
	}
}
