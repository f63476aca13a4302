package telegram

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/testutil/faketelegram"
)

// webLink is an answer only its person may read: a capability link.
var webLink = chat.Reply{Content: "🌐 This session in the browser: keep it to yourself.", Ephemeral: true,
	Rows: []chat.Row{{Buttons: []chat.Button{{Label: "Open in browser", URL: "http://127.0.0.1:7878/s/capability-token/"}}}}}

// leaked reports the calls that showed the group, in any topic, what.
func (w *world) leaked(what string) []faketelegram.Call {
	var out []faketelegram.Call
	for _, c := range w.tg.Calls() {
		if c.Params["chat_id"] == w.general() && (strings.Contains(c.Params["text"], what) || strings.Contains(c.Params["reply_markup"], what)) {
			out = append(out, c)
		}
	}
	return out
}

// A command's ephemeral answers (at once, after Defer(true), or an
// ephemeral Edit after Defer(false)) reach the person in their private
// chat with the bot, the link included; the group sees none of them.
func TestEphemeralCommandAnswersArePrivate(t *testing.T) {
	w := newWorld(t)
	h := newRecorder()
	h.onCommand = func(ev chat.CommandEvent, resp chat.Responder) {
		switch ev.Name {
		case "status":
			_ = resp.Respond(webLink)
		case "mode":
			_ = resp.Defer(true)
			_, _ = resp.Edit(chat.Reply{Content: "deferred secret", Ephemeral: true})
		case "thread":
			_ = resp.Defer(false)
			_, _ = resp.Edit(chat.Reply{Content: "status secret", Ephemeral: true})
		}
	}
	runBot(t, w, w.p, h, Options{IsOwner: w.onlyOwner})
	w.tg.StartBot(w.tg.Owner)
	_, thread := w.topic("api")
	w.tg.OwnerText(thread, "/status")
	w.tg.OwnerText(thread, "/mode plan")
	w.tg.OwnerText(thread, "/thread x")
	dm := w.tg.Owner.ID
	wants := []string{"keep it to yourself", "http://127.0.0.1:7878/s/capability-token/", "deferred secret", "status secret"}
	shown := func() string {
		var texts []string
		for _, m := range w.tg.Messages(dm, 0) {
			texts = append(texts, m.Text)
			for _, e := range m.Entities {
				texts = append(texts, e.URL)
			}
		}
		return strings.Join(texts, "\n")
	}
	if !w.tg.WaitFor(wait, func() bool {
		for _, want := range wants {
			if !strings.Contains(shown(), want) {
				return false
			}
		}
		return true
	}) {
		t.Fatalf("the private chat lacks some of %q: %q", wants, shown())
	}
	time.Sleep(100 * time.Millisecond)
	for _, what := range []string{"capability-token", "yourself", "secret"} {
		if got := w.leaked(what); len(got) > 0 {
			t.Errorf("the group shows %q: %+v", what, got)
		}
	}
}

// A person who never started the bot gets, in the topic, only a line that
// says how to let it write to them: never what was meant for them alone.
// A click's answer that cannot be the toast says it in an alert.
func TestEphemeralWithoutPrivateChatSaysHowNeverWhat(t *testing.T) {
	w := newWorld(t)
	bob := w.tg.AddUser("Bob", true)
	h := newRecorder()
	h.onCommand = func(ev chat.CommandEvent, resp chat.Responder) { _ = resp.Respond(webLink) }
	long := chat.Reply{Content: "secret " + strings.Repeat("x", 300), Ephemeral: true}
	h.onClick = func(ev chat.ComponentEvent, resp chat.Responder) { _ = resp.Respond(long) }
	owners := func(id string) bool { return id == w.owner() || id == strconv.FormatInt(bob.ID, 10) }
	runBot(t, w, w.p, h, Options{IsOwner: owners})
	ch, id := w.card(t, permRows)
	place, _ := ParseChannel(ch)
	cmd := w.tg.Inject(faketelegram.Incoming{From: bob, ThreadID: place.Topic, Text: "/status"})
	line, ok := w.tg.WaitMessage(wait, func(m faketelegram.Message) bool { return strings.Contains(m.Text, "can't message you privately") })
	if !ok {
		t.Fatal("no word on the private chat")
	}
	if line.Chat.ID != w.tg.ChatID || line.MessageThreadID != cmd.MessageThreadID || line.ReplyToMessage == nil || line.ReplyToMessage.MessageID != cmd.MessageID {
		t.Errorf("the line is not an answer to the command in its topic: %+v", line)
	}
	if line.Text != noPrivateChat {
		t.Errorf("the line says more than how: %q", line.Text)
	}
	q := w.click(t, bob, id, "Allow")
	if a := w.answeredOnce(t, q); a.Text != noPrivateChat || !a.ShowAlert {
		t.Errorf("the click's answer: %+v", a)
	}
	time.Sleep(100 * time.Millisecond)
	for _, what := range []string{"capability-token", "yourself", "secret"} {
		if got := w.leaked(what); len(got) > 0 {
			t.Errorf("the group shows %q: %+v", what, got)
		}
	}
	// Once Bob starts the bot, the same click's answer reaches him; the
	// click's own answer says where to look.
	w.tg.StartBot(bob)
	q = w.click(t, bob, id, "Allow")
	if a := w.answeredOnce(t, q); a.Text != sentPrivately {
		t.Errorf("the click's answer: %+v", a)
	}
	if !w.tg.WaitFor(wait, func() bool {
		m := w.tg.Messages(bob.ID, 0)
		return len(m) == 3 && strings.HasPrefix(m[2].Text, "secret xxx")
	}) {
		t.Errorf("Bob's private chat shows %+v", w.tg.Messages(bob.ID, 0))
	}
}

// An owner's /start in the private chat is answered: they know what the
// chat is for; anything else they write there is pointed to the group. A
// stranger is answered nothing.
func TestStartInPrivateChat(t *testing.T) {
	w := newWorld(t)
	h := newRecorder()
	runBot(t, w, w.p, h, Options{IsOwner: w.onlyOwner})
	mallory := w.tg.AddUser("Mallory", true)
	w.tg.StartBot(mallory)
	w.tg.StartBot(w.tg.Owner)
	if !w.tg.WaitFor(wait, func() bool { return len(w.tg.Messages(w.tg.Owner.ID, 0)) == 2 }) {
		t.Fatalf("the owner's private chat shows %+v", w.tg.Messages(w.tg.Owner.ID, 0))
	}
	// Anything else an owner writes there is pointed to the group.
	w.tg.Inject(faketelegram.Incoming{ChatID: w.tg.Owner.ID, Text: "fix the login form"})
	if !w.tg.WaitFor(wait, func() bool { m := w.tg.Messages(w.tg.Owner.ID, 0); return len(m) == 4 && m[3].Text == notHere }) {
		t.Fatalf("the owner's private chat shows %+v", w.tg.Messages(w.tg.Owner.ID, 0))
	}
	w.tg.Inject(faketelegram.Incoming{From: mallory, ChatID: mallory.ID, Text: "hello?"})
	time.Sleep(100 * time.Millisecond)
	if m := w.tg.Messages(mallory.ID, 0); len(m) != 2 {
		t.Errorf("a stranger's private messages were answered: %+v", m)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.commands)+len(h.messages) != 0 {
		t.Errorf("a private chat's messages reached the core: %+v %+v", h.commands, h.messages)
	}
}
