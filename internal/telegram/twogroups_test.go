package telegram

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/guard"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/testutil/faketelegram"
)

// Message ids are per chat: two groups' cards may have the same one. The
// ids the core binds and checks (the guard's records, a card's request)
// are the front end's, so they name the chat too: each click reaches its
// own card, and a binding of one group never overwrites the other's.
func TestTwoGroupsWhoseMessageIDsCoincide(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "durable")
	d, err := state.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	bindings, err := state.OpenBindings(d)
	if err != nil {
		t.Fatal(err)
	}
	g := guard.New(bindings)
	g.Wait = 100 * time.Millisecond
	st := openStore(t, dir)

	a := faketelegram.New(t)
	b := faketelegram.New(t)
	other := b.AddGroup("second", faketelegram.Supergroup)
	b.SetMember(other, b.Bot.ID, "administrator")
	type side struct {
		server string
		tg     *faketelegram.Server
		chatID int64
		h      *recorder
		card   int64
		rows   []chat.Row
	}
	sides := []*side{
		{server: "phone", tg: a, chatID: a.ChatID, h: newRecorder(), rows: permRows},
		{server: "tablet", tg: b, chatID: other, h: newRecorder(), rows: []chat.Row{{Buttons: []chat.Button{{Label: "Allow", CustomID: "cb1|inst|perm|other"}}}}},
	}
	ctx := context.Background()
	for _, s := range sides {
		p, err := NewPoster(s.tg.URL, s.tg.Token, s.server, st)
		if err != nil {
			t.Fatal(err)
		}
		bot := NewBot(p, s.h, Options{Server: s.server, ChatID: s.chatID, PollTimeout: time.Second})
		bctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); _ = bot.Run(bctx) }()
		t.Cleanup(func() { cancel(); <-done })
		m := chat.Message{Content: "Allow **Bash** in " + s.server + "?", Rows: s.rows}
		ch := ChannelID(s.chatID, 0)
		id, _, err := p.PostCard(ctx, ch, m)
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Bind(ctx, s.server, ch, id, m, nil); err != nil { // as the router binds what it draws
			t.Fatal(err)
		}
		tm, ok := s.tg.WaitMessage(wait, func(fm faketelegram.Message) bool { return fm.Chat.ID == s.chatID && fm.ReplyMarkup != nil })
		if !ok {
			t.Fatal("no card")
		}
		s.card = tm.MessageID
	}
	if sides[0].card != sides[1].card {
		t.Fatalf("the test needs coinciding message ids: %d and %d", sides[0].card, sides[1].card)
	}
	for _, s := range sides {
		if !s.tg.WaitFor(wait, s.tg.Polling) {
			t.Fatal("a bot does not poll")
		}
		m, _ := s.tg.Message(s.chatID, s.card)
		if _, err := s.tg.Click(s.tg.Owner, s.chatID, s.card, m.ReplyMarkup.InlineKeyboard[0][0].CallbackData); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range sides {
		s.h.waitFor(t, s.server+"'s click", func(r *recorder) bool { return len(r.components) == 1 })
		ev := s.h.components[0]
		if ev.CustomID != s.rows[0].Buttons[0].CustomID || ev.Server != s.server {
			t.Errorf("%s: the click reached another card: %+v", s.server, ev)
		}
		if err := g.Check(ctx, ev.Server, ev.ChannelID, guard.Shown{ID: ev.MessageID, Content: ev.Content, Rows: ev.Rows}); err != nil {
			t.Errorf("%s: the click on its own card is refused: %v (message %s)", s.server, err, ev.MessageID)
		}
	}
}
