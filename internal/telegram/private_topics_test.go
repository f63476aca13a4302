package telegram

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/testutil/faketelegram"
)

// A private thread is a topic of the person's private chat with the bot:
// refused, saying how to fix it, when the bot has no topic mode or the
// person has not started it; else made there and recorded under the
// channel it was asked from, and posts to it land in that topic only.
func TestPrivateThreadIsATopicOfThePrivateChat(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	ch, _ := w.topic("api")
	owner := w.owner()
	_, _, err := w.p.StartPrivateThread(ctx, ch, "secret", []string{owner})
	if !errors.Is(err, ErrNoTopicMode) || !strings.Contains(err.Error(), "@BotFather") {
		t.Fatalf("without topic mode: %v", err)
	}
	if n := len(w.tg.CallsTo("createForumTopic")); n != 0 {
		t.Errorf("createForumTopic called %d times without topic mode", n)
	}
	w.tg.SetPrivateTopics(true)
	if _, _, err := w.p.StartPrivateThread(ctx, ch, "secret", []string{owner}); !errors.Is(err, ErrNotStarted) || !strings.Contains(err.Error(), "Start") {
		t.Fatalf("before the owner started the bot: %v", err)
	}
	w.tg.StartBot(w.tg.Owner)
	id, missed, err := w.p.StartPrivateThread(ctx, ch, "secret", []string{owner, "42"})
	if err != nil || len(missed) != 0 {
		t.Fatalf("StartPrivateThread: %q %v %v", id, missed, err)
	}
	place, _ := ParseChannel(id)
	if place.Chat != w.tg.Owner.ID || place.Topic == 0 {
		t.Fatalf("the thread %q is not a topic of the owner's private chat", id)
	}
	if rec, ok := w.p.Topic(id); !ok || rec.ParentID != ch || rec.Name != "secret" {
		t.Errorf("topic record: %+v", rec)
	}
	if _, err := w.p.Post(ctx, id, chat.Message{Content: "only for you"}); err != nil {
		t.Fatal(err)
	}
	got := w.tg.Messages(w.tg.Owner.ID, place.Topic)
	if len(got) == 0 || got[len(got)-1].Text != "only for you" {
		t.Errorf("the private topic shows %+v", got)
	}
	if all, _ := w.p.EveryoneCanView(ctx, id); all {
		t.Error("a private topic: everyone can view")
	}
}

// A message of the owner in a private topic ccbridge opened is the
// thread's, with its parent, as in the group; a command there is a
// command of the thread; a click on a keyboard there reaches the core.
// Anywhere else in the private chat it is answered as before.
func TestBotPrivateTopicIsAThread(t *testing.T) {
	w := newWorld(t)
	h := newRecorder()
	h.onClick = func(ev chat.ComponentEvent, resp chat.Responder) {
		_, _ = resp.Update(chat.Message{Content: "Allowed"})
	}
	runBot(t, w, w.p, h, Options{IsOwner: w.onlyOwner})
	ch, _ := w.topic("api")
	w.tg.SetPrivateTopics(true)
	w.tg.StartBot(w.tg.Owner)
	id, _, err := w.p.StartPrivateThread(context.Background(), ch, "secret", []string{w.owner()})
	if err != nil {
		t.Fatal(err)
	}
	place, _ := ParseChannel(id)
	dm := w.tg.Owner.ID
	w.tg.Inject(faketelegram.Incoming{ChatID: dm, ThreadID: place.Topic, Text: "hello folder"})
	w.tg.Inject(faketelegram.Incoming{ChatID: dm, ThreadID: place.Topic, Text: "/status"})
	h.waitFor(t, "the message and the command", func(r *recorder) bool { return len(r.messages) == 1 && len(r.commands) == 1 })
	if ev := h.messages[0]; ev.ChannelID != id || ev.ParentID != ch || ev.Content != "hello folder" || ev.Author.ID != w.owner() {
		t.Errorf("message: %+v", ev)
	}
	if ev := h.commands[0]; ev.ChannelID != id || ev.ParentID != ch || ev.Name != "status" {
		t.Errorf("command: %+v", ev)
	}
	cid, _, err := w.p.PostCard(context.Background(), id, chat.Message{Content: "Allow **Bash**?", Rows: permRows})
	if err != nil {
		t.Fatal(err)
	}
	card, _ := w.tg.Message(dm, msgID(t, cid))
	q, err := w.tg.Click(w.tg.Owner, dm, card.MessageID, card.ReplyMarkup.InlineKeyboard[0][0].CallbackData)
	if err != nil {
		t.Fatal(err)
	}
	h.waitFor(t, "the click", func(r *recorder) bool { return len(r.components) == 1 })
	if ev := h.components[0]; ev.ChannelID != id || ev.CustomID != permRows[0].Buttons[0].CustomID {
		t.Errorf("click: %+v", ev)
	}
	w.answeredOnce(t, q)
	// The private chat's General is not a thread.
	w.tg.Inject(faketelegram.Incoming{ChatID: dm, Text: "hello?"})
	if _, ok := w.tg.WaitMessage(wait, func(m faketelegram.Message) bool { return m.Chat.ID == dm && m.Text == notHere }); !ok {
		t.Error("a message in the private chat's General was not answered as before")
	}
	if len(h.messages) != 1 {
		t.Errorf("the core got %d messages", len(h.messages))
	}
}

// A topic of a person's private chat reaches the core only while they are
// an owner: one who no longer is drives nothing from it.
func TestBotPrivateTopicOfAStrangerReachesNothing(t *testing.T) {
	w := newWorld(t)
	h := newRecorder()
	runBot(t, w, w.p, h, Options{IsOwner: w.onlyOwner})
	ch, _ := w.topic("api")
	w.tg.SetPrivateTopics(true)
	former := w.tg.AddUser("Former", true)
	w.tg.StartBot(former)
	id, _, err := w.p.StartPrivateThread(context.Background(), ch, "theirs", []string{strconv.FormatInt(former.ID, 10)})
	if err != nil {
		t.Fatal(err)
	}
	place, _ := ParseChannel(id)
	w.tg.Inject(faketelegram.Incoming{From: former, ChatID: former.ID, ThreadID: place.Topic, Text: "rm -rf /"})
	w.tg.Inject(faketelegram.Incoming{From: former, ChatID: former.ID, ThreadID: place.Topic, Text: "/status"})
	w.tg.StartBot(w.tg.Owner)
	w.tg.OwnerText(0, "after")
	h.waitFor(t, "the owner's message", func(r *recorder) bool { return len(r.messages) == 1 })
	if ev := h.messages[0]; ev.Content != "after" || len(h.commands) != 0 {
		t.Errorf("the core got %+v and %d commands", h.messages, len(h.commands))
	}
}
