package telegram

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/testutil/faketelegram"
)

// picker is an answer for the asker alone that carries a choice (/open's
// folder picker): the folder names are for them, not the group.
var picker = chat.Reply{Content: "📂 Which folder?", Ephemeral: true, Rows: []chat.Row{{Select: &chat.Select{
	CustomID: "cb1|inst|openpick|" + strings.Repeat("n", 80), MinValues: 1, MaxValues: 1,
	Options: []chat.Option{{Label: "secret-folder-alpha", Value: "h1"}, {Label: "secret-folder-beta", Value: "h2"}}}}}}

// privateData finds the callback_data of a button of a private chat's
// message by its label.
func (w *world) privateData(t *testing.T, chatID, id int64, label string) string {
	t.Helper()
	m, _ := w.tg.Message(chatID, id)
	if m.ReplyMarkup != nil {
		for _, row := range m.ReplyMarkup.InlineKeyboard {
			for _, b := range row {
				if b.Text == label {
					return b.CallbackData
				}
			}
		}
	}
	t.Fatalf("no button %q on %+v", label, m)
	return ""
}

// An answer for one person with controls goes to their private chat with
// its keyboard, and nothing of it to the group. A click there reaches the
// core as a click in the channel it was asked in (recorded server-side:
// the button carries a short token), on the private message as drawn, and
// acts once: a second click is expired and reaches nothing.
func TestPrivateAnswerKeepsItsControlsAndActsWhereAsked(t *testing.T) {
	w := newWorld(t)
	h := newRecorder()
	h.onCommand = func(ev chat.CommandEvent, resp chat.Responder) {
		_ = resp.Defer(false)
		_, _ = resp.Edit(picker)
	}
	runBot(t, w, w.p, h, Options{IsOwner: w.onlyOwner})
	w.tg.StartBot(w.tg.Owner)
	ch, thread := w.topic("api")
	w.tg.OwnerText(thread, "/status")
	dm := w.tg.Owner.ID
	var drawn faketelegram.Message
	if !w.tg.WaitFor(wait, func() bool {
		for _, m := range w.tg.Messages(dm, 0) {
			if m.ReplyMarkup != nil && strings.Contains(m.Text, "Which folder") {
				drawn = m
				return true
			}
		}
		return false
	}) {
		t.Fatalf("no picker in the private chat: %+v", w.tg.Messages(dm, 0))
	}
	data := w.privateData(t, dm, drawn.MessageID, "secret-folder-beta")
	if len(data) > 64 || strings.Contains(data, ch) || strings.Contains(data, "openpick") {
		t.Errorf("callback_data carries more than a short token: %q", data)
	}
	q, err := w.tg.Click(w.tg.Owner, dm, drawn.MessageID, data)
	if err != nil {
		t.Fatal(err)
	}
	h.waitFor(t, "the pick", func(r *recorder) bool { return len(r.components) == 1 })
	ev := h.components[0]
	if ev.ChannelID != ch || ev.MessageID != MessageID(dm, drawn.MessageID) || ev.CustomID != picker.Rows[0].Select.CustomID ||
		len(ev.Values) != 1 || ev.Values[0] != "h2" || ev.Content != picker.Content || len(ev.Rows) != 1 || ev.User.ID != w.owner() {
		t.Errorf("the pick: %+v", ev)
	}
	w.answeredOnce(t, q)
	// One use: the same button again is expired, and reaches nobody.
	q, err = w.tg.Click(w.tg.Owner, dm, drawn.MessageID, data)
	if err != nil {
		t.Fatal(err)
	}
	if a := w.answeredOnce(t, q); a.Text != expired {
		t.Errorf("a second pick: %+v", a)
	}
	time.Sleep(100 * time.Millisecond)
	h.mu.Lock()
	n := len(h.components)
	h.mu.Unlock()
	if n != 1 {
		t.Errorf("a second pick reached the core: %d clicks", n)
	}
	for _, what := range []string{"secret-folder", "Which folder"} {
		if got := w.leaked(what); len(got) > 0 {
			t.Errorf("the group shows %q: %+v", what, got)
		}
	}
}

// A person's private chat has the same id for every bot: a private answer
// another server's bot drew there is not this bot's to act on.
func TestPrivateAnswerOfAnotherServerIsExpired(t *testing.T) {
	w := newWorld(t)
	h := newRecorder()
	runBot(t, w, w.p, h, Options{IsOwner: w.onlyOwner})
	w.tg.StartBot(w.tg.Owner)
	other, err := NewPoster(w.tg.URL, w.tg.Token, "laptop", w.store)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	dm := strconv.FormatInt(w.tg.Owner.ID, 10)
	id, err := other.postPrivate(ctx, dm, w.general(), picker)
	if err != nil {
		t.Fatal(err)
	}
	data := w.privateData(t, w.tg.Owner.ID, msgID(t, id), "secret-folder-alpha")
	q, err := w.tg.Click(w.tg.Owner, w.tg.Owner.ID, msgID(t, id), data)
	if err != nil {
		t.Fatal(err)
	}
	if a := w.answeredOnce(t, q); a.Text != expired {
		t.Errorf("another server's private answer: %+v", a)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.components) != 0 {
		t.Errorf("it reached the core: %+v", h.components)
	}
}

// The command menu is set in the group and in each owner's private chat,
// once they have started the bot (at start, or on /start); a stranger's
// private chat gets none.
func TestCommandMenuInOwnersPrivateChats(t *testing.T) {
	w := newWorld(t)
	bob := w.tg.AddUser("Bob", true)
	mallory := w.tg.AddUser("Mallory", true)
	w.tg.StartBot(w.tg.Owner)
	w.tg.StartBot(mallory)
	bobID := strconv.FormatInt(bob.ID, 10)
	owners := func(id string) bool { return id == w.owner() || id == bobID }
	runBot(t, w, w.p, newRecorder(), Options{IsOwner: owners, OwnerIDs: []string{w.owner(), bobID}})
	scope := func(id int64) string { return "chat:" + strconv.FormatInt(id, 10) }
	menu := len(testCommands) - 1 // all but Bad-Name!
	if !w.tg.WaitFor(wait, func() bool { return len(w.tg.Commands(scope(w.tg.Owner.ID))) == menu }) {
		t.Errorf("the owner's private chat has no menu: %+v", w.tg.Commands(scope(w.tg.Owner.ID)))
	}
	if c := w.tg.Commands(scope(w.tg.ChatID)); len(c) != menu {
		t.Errorf("the group's menu: %+v", c)
	}
	// Bob had not started the bot: his menu comes with his /start.
	if c := w.tg.Commands(scope(bob.ID)); len(c) != 0 {
		t.Errorf("a chat not started has a menu: %+v", c)
	}
	w.tg.StartBot(bob)
	if !w.tg.WaitFor(wait, func() bool { return len(w.tg.Commands(scope(bob.ID))) == menu }) {
		t.Errorf("Bob's private chat has no menu after /start: %+v", w.tg.Commands(scope(bob.ID)))
	}
	w.tg.Inject(faketelegram.Incoming{From: mallory, ChatID: mallory.ID, Text: "/start"})
	time.Sleep(200 * time.Millisecond)
	if c := w.tg.Commands(scope(mallory.ID)); len(c) != 0 {
		t.Errorf("a stranger's private chat has a menu: %+v", c)
	}
}
