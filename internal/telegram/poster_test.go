package telegram

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/state"
)

func TestAddresses(t *testing.T) {
	for _, c := range []struct {
		id   string
		want Place
	}{{"-1001234567890", Place{Chat: -1001234567890}}, {"-1001234567890.42", Place{Chat: -1001234567890, Topic: 42}}, {"123", Place{Chat: 123}}} {
		p, err := ParseChannel(c.id)
		if err != nil || p != c.want || p.ChannelID() != c.id {
			t.Errorf("ParseChannel(%q) = %+v, %v; want %+v", c.id, p, err, c.want)
		}
	}
	for _, bad := range []string{"", "abc", "-100.0", "-100.x", "0", "-100.-3", "-100/42"} {
		if _, err := ParseChannel(bad); err == nil {
			t.Errorf("ParseChannel(%q) took it", bad)
		}
	}
	if _, _, err := ParseMessage("0"); err == nil {
		t.Error("ParseMessage took 0")
	}
	// A message id names its chat, message first: a record key, in order.
	id := MessageID(-1001234567890, 57)
	if c, n, err := ParseMessage(id); id != "57@-1001234567890" || c != -1001234567890 || n != 57 || err != nil {
		t.Errorf("MessageID: %q → %d %d %v", id, c, n, err)
	}
	if !state.SnowflakeLess(MessageID(-100, 9), MessageID(-100, 10)) || state.SnowflakeLess(MessageID(-100, 10), MessageID(-100, 9)) {
		t.Error("a chat's message ids do not order by value")
	}
	here := Place{Chat: -1001234567890, Topic: 42}
	if n, err := here.message(id); n != 57 || err != nil {
		t.Errorf("this chat's message: %d %v", n, err)
	}
	if _, err := here.message(MessageID(-1002000000001, 57)); err == nil {
		t.Error("another chat's message was taken for this chat's")
	}
}

func TestPostInTopicAndGeneral(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	ch, thread := w.topic("api")
	id, err := w.p.Post(ctx, ch, chat.Message{Content: "a <b>tag</b> & more, ask @someone"})
	if err != nil {
		t.Fatal(err)
	}
	got, ok := w.tg.Message(w.tg.ChatID, msgID(t, id))
	if !ok || got.MessageThreadID != thread || !strings.Contains(got.Text, "a <b>tag</b> & more") {
		t.Fatalf("topic post: %+v", got)
	}
	if strings.Contains(got.Text, "@someone") {
		t.Errorf("an @name was sent as a mention: %q", got.Text)
	}
	if _, err := w.p.Post(ctx, w.general(), chat.Message{Content: "in General"}); err != nil {
		t.Fatal(err)
	}
	if msgs := w.tg.Messages(w.tg.ChatID, 0); len(msgs) != 1 || msgs[0].Text != "in General" {
		t.Fatalf("General shows %+v", msgs)
	}
	for _, c := range w.tg.CallsTo("sendMessage") {
		if c.Params["chat_id"] == w.general() && c.Params["message_thread_id"] != "" && !strings.Contains(c.Params["text"], "tag") {
			t.Errorf("a post to General named a topic: %v", c.Params)
		}
	}
}

func TestPostSplitsLongTextLosingNothing(t *testing.T) {
	w := newWorld(t)
	ch, thread := w.topic("api")
	var b strings.Builder
	for i := 0; b.Len() < 10000; i++ {
		b.WriteString("line with <angle> & 😀 emoji ")
		b.WriteString(strings.Repeat("x", i%50))
		b.WriteString("\n")
	}
	text := strings.TrimSpace(b.String())
	if _, err := w.p.Post(context.Background(), ch, chat.Message{Content: text}); err != nil {
		t.Fatal(err)
	}
	msgs := w.posts(thread)
	if len(msgs) < 3 {
		t.Fatalf("%d messages for %d characters", len(msgs), len(text))
	}
	var joined []string
	for _, m := range msgs {
		if n := len(utf16.Encode([]rune(m.Text))); n > MaxText {
			t.Errorf("a message of %d units", n)
		}
		joined = append(joined, m.Text)
	}
	if strings.Join(strings.Fields(strings.Join(joined, "\n")), " ") != strings.Join(strings.Fields(text), " ") {
		t.Error("the parts do not add up to the text")
	}
}

func TestPostCardKeyboard(t *testing.T) {
	w := newWorld(t)
	ch, _ := w.topic("api")
	long := "cb1|inst|perm|" + strings.Repeat("k", 80) // a custom_id of 100 bytes
	rows := []chat.Row{
		{Buttons: []chat.Button{{Label: "Allow", CustomID: long, Style: chat.Success}, {Label: "Deny", CustomID: "cb1|i|deny", Style: chat.Danger},
			{Label: "Gone", CustomID: "cb1|i|gone", Disabled: true}}},
		{Select: &chat.Select{CustomID: "cb1|i|pick", Options: []chat.Option{{Label: "One", Value: "1"}, {Label: "Two", Value: "2"}}}},
	}
	id, files, err := w.p.PostCard(context.Background(), ch, chat.Message{Content: "Allow **Bash**?", Rows: rows})
	if err != nil || files != nil {
		t.Fatal(err, files)
	}
	m, _ := w.tg.Message(w.tg.ChatID, msgID(t, id))
	kb := m.ReplyMarkup
	if kb == nil || len(kb.InlineKeyboard) != 3 {
		t.Fatalf("keyboard: %+v", kb)
	}
	first := kb.InlineKeyboard[0]
	if len(first) != 2 || first[0].Text != "Allow" || first[0].Style != "success" || first[1].Style != "danger" {
		t.Errorf("buttons: %+v (a disabled one is left out)", first)
	}
	for _, row := range kb.InlineKeyboard {
		for _, b := range row {
			if len(b.CallbackData) > 64 || strings.Contains(b.CallbackData, "cb1") {
				t.Errorf("callback_data %q carries the custom_id", b.CallbackData)
			}
		}
	}
	d, drawn, ok := w.p.drawing(w.tg.ChatID, id)
	if !ok || d.Content != "Allow **Bash**?" || chat.Face(d.Content, drawn) != chat.Face("Allow **Bash**?", rows) {
		t.Errorf("the drawing is not recorded as drawn: %+v", d)
	}
}

func TestEditRedrawsAndDropsKeyboard(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	ch, _ := w.topic("api")
	rows := []chat.Row{{Buttons: []chat.Button{{Label: "Go", CustomID: "cb1|i|go"}}}}
	id, _, err := w.p.PostCard(ctx, ch, chat.Message{Content: "Card", Rows: rows})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.p.EditCard(ctx, ch, id, chat.Message{Content: "Card — allowed"}, "allowed"); err != nil {
		t.Fatal(err)
	}
	m, _ := w.tg.Message(w.tg.ChatID, msgID(t, id))
	if m.Text != "Card — allowed" || m.ReplyMarkup != nil {
		t.Fatalf("after the edit: %q %+v", m.Text, m.ReplyMarkup)
	}
	if _, _, ok := w.p.drawing(w.tg.ChatID, id); ok {
		t.Error("the drawing of a keyboard that is gone is kept")
	}
	// The same edit again changes nothing: Telegram's "not modified" is no failure.
	if err := w.p.Edit(ctx, ch, id, chat.Message{Content: "Card — allowed"}); err != nil {
		t.Fatal(err)
	}
	if err := w.p.Edit(ctx, ch, "99999", chat.Message{Content: "x"}); !errors.Is(err, chat.ErrUnknownMessage) {
		w.tg.RefusalsExpected.Store(true)
		t.Fatalf("editing a missing message: %v, want ErrUnknownMessage", err)
	}
}

func TestReactMapsToAllowedEmoji(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	ch, thread := w.topic("api")
	in := w.tg.OwnerText(thread, "hello")
	for mark, want := range map[string]string{"✅": "👍", "⚠️": "🤔", "⏳": "👀", "❌": "👎"} {
		if err := w.p.React(ctx, ch, MessageID(w.tg.ChatID, in.MessageID), mark); err != nil {
			t.Fatalf("%s: %v", mark, err)
		}
		m, _ := w.tg.Message(w.tg.ChatID, in.MessageID)
		if len(m.Reactions) != 1 || m.Reactions[0] != want {
			t.Errorf("%s shows as %v, want %s", mark, m.Reactions, want)
		}
	}
	if err := w.p.React(ctx, ch, MessageID(w.tg.ChatID, in.MessageID), "🦖"); err == nil {
		t.Error("an emoji with no allowed reaction was taken")
	}
}

func TestTypingThreadsAndViews(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	ch, thread := w.topic("api")
	if err := w.p.Typing(ctx, ch); err != nil {
		t.Fatal(err)
	}
	if a := w.tg.ChatActions(); len(a) != 1 || a[0].Action != "typing" || a[0].ThreadID != thread {
		t.Fatalf("chat actions: %+v", a)
	}
	sub, err := w.p.StartThread(ctx, ch, "fix the bug")
	if err != nil {
		t.Fatal(err)
	}
	place, _ := ParseChannel(sub)
	if place.Chat != w.tg.ChatID || place.Topic == 0 {
		t.Fatalf("thread %q", sub)
	}
	if rec, ok := w.p.Topic(sub); !ok || rec.ParentID != ch || rec.Name != "fix the bug" {
		t.Errorf("topic record: %+v", rec)
	}
	if err := w.p.ArchiveThread(ctx, sub); err != nil {
		t.Fatal(err)
	}
	if !w.tg.TopicClosed(place.Topic) {
		t.Error("the topic is not closed")
	}
	w.tg.RefusalsExpected.Store(true) // closing twice: Telegram says not modified
	if err := w.p.ArchiveThread(ctx, sub); err != nil {
		t.Errorf("closing twice: %v", err)
	}
	if all, err := w.p.EveryoneCanView(ctx, ch); err != nil || !all {
		t.Errorf("a group topic: everyone can view = %v, %v", all, err)
	}
	if all, _ := w.p.EveryoneCanView(ctx, "123456789"); all {
		t.Error("a private chat: everyone can view")
	}
}

func TestFilesInAndOut(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	ch, thread := w.topic("api")
	id, err := w.p.Post(ctx, ch, chat.Message{Content: "the report", Files: []chat.File{{Name: "report.txt", Data: []byte("hello file")}}})
	if err != nil {
		t.Fatal(err)
	}
	msgs := w.posts(thread)
	if len(msgs) != 2 || msgs[1].Document == nil || msgs[1].Document.FileName != "report.txt" || MessageID(w.tg.ChatID, msgs[0].MessageID) != id {
		t.Fatalf("messages: %+v", msgs)
	}
	in := w.tg.OwnerDocument(thread, "notes.md", []byte("# notes"), "read this")
	got, err := w.p.Download(ctx, FileURL(in.Document.FileID), 1<<20)
	if err != nil || string(got) != "# notes" {
		t.Fatalf("download: %q, %v", got, err)
	}
	if _, err := w.p.Download(ctx, FileURL(in.Document.FileID), 3); err == nil {
		t.Error("a file over the limit was downloaded")
	}
	if _, err := w.p.Download(ctx, w.tg.URL+"/file/bot"+w.tg.Token+"/documents/x", 1<<20); err == nil {
		t.Error("a URL that is no Telegram file id was fetched")
	}
}

func TestSendMentioningAndNotice(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	ch, thread := w.topic("api")
	owner := w.tg.Owner.ID
	if _, err := w.p.SendMentioning(ctx, ch, "ping-1", "<@"+strconv.FormatInt(owner, 10)+"> <@42> Claude is waiting", []string{strconv.FormatInt(owner, 10)}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.p.SendMentioning(ctx, ch, "ping-1", "<@"+strconv.FormatInt(owner, 10)+"> again", []string{strconv.FormatInt(owner, 10)}); err != nil {
		t.Fatal(err)
	}
	msgs := w.posts(thread)
	if len(msgs) != 1 {
		t.Fatalf("%d messages for one nonce", len(msgs))
	}
	var mention bool
	for _, e := range msgs[0].Entities {
		mention = mention || e.Type == "text_link" && e.URL == "tg://user?id="+strconv.FormatInt(owner, 10)
	}
	if !mention || !strings.Contains(msgs[0].Text, "42>") || len(msgs[0].Entities) != 1 {
		t.Errorf("mention: %+v", msgs[0])
	}
	// Each notice is its own event, as on Discord: the same words twice
	// (a second message met by a full queue) are posted twice.
	for range 2 {
		if err := w.p.Notice(ctx, ch, "ccbridge restarted", time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(w.posts(thread)); n != 3 {
		t.Errorf("two notices and a mention gave %d messages", n)
	}
}

func TestRateLimitHonouredNothingDoubled(t *testing.T) {
	w := newWorld(t)
	ch, thread := w.topic("api")
	w.tg.RateLimit("sendMessage", 1, 1)
	start := time.Now()
	if _, err := w.p.Post(context.Background(), ch, chat.Message{Content: "once"}); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited < time.Second {
		t.Errorf("retried after %v, before the retry_after of 1 s", waited)
	}
	if msgs := w.posts(thread); len(msgs) != 1 {
		t.Errorf("%d messages", len(msgs))
	}
	// A context too short to wait: the 429 comes back with its wait.
	w.tg.RateLimit("sendMessage", 1, 5)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := w.p.Post(ctx, ch, chat.Message{Content: "later"})
	if !errors.Is(err, chat.ErrTransient) || chat.RetryAfter(err) != 5*time.Second {
		t.Errorf("429 past the context: %v (retry after %v)", err, chat.RetryAfter(err))
	}
	if msgs := w.posts(thread); len(msgs) != 1 {
		t.Errorf("%d messages", len(msgs))
	}
}

func TestTokenNeverInErrors(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	check := func(what string, err error) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s: no error", what)
		}
		if strings.Contains(err.Error(), w.tg.Token) || strings.Contains(err.Error(), strings.SplitN(w.tg.Token, ":", 2)[1]) {
			t.Errorf("%s: the token is in %q", what, err)
		}
	}
	bad, err := NewPoster(w.tg.URL, "7000000001:AAWrongTokenWrongTokenWrongToken00", "phone", w.store)
	if err != nil {
		t.Fatal(err)
	}
	err = bad.Typing(ctx, w.general())
	check("a refused token", err)
	if !errors.Is(err, chat.ErrAuth) {
		t.Errorf("401: %v, want ErrAuth", err)
	}
	w.tg.Close()
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	err = w.p.Typing(ctx, w.general())
	check("no server", err)
	if !errors.Is(err, chat.ErrTransient) {
		t.Errorf("no server: %v, want ErrTransient", err)
	}
	_, err = w.p.Download(ctx, FileURL("abc"), 10)
	check("download with no server", err)
}

func TestPostOnceReplyToAndAnEditThatOutgrowsItsMessage(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	ch, thread := w.topic("api")
	if w.p.Limit() != 4096 {
		t.Errorf("limit %d", w.p.Limit())
	}
	in := w.tg.OwnerText(thread, "question")
	a, err := w.p.PostOnce(ctx, ch, "n1", chat.Message{Content: "answer", ReplyTo: MessageID(w.tg.ChatID, in.MessageID)})
	if err != nil {
		t.Fatal(err)
	}
	b, err := w.p.PostOnce(ctx, ch, "n1", chat.Message{Content: "answer"})
	if err != nil || a != b {
		t.Fatalf("a repeat of a nonce: %q %q %v", a, b, err)
	}
	if posts := w.posts(thread); len(posts) != 2 || posts[1].ReplyToMessage == nil || posts[1].ReplyToMessage.MessageID != in.MessageID {
		t.Fatalf("posts: %+v", posts)
	}
	long := strings.Repeat("word ", 1500) // 7,500 characters
	rows := []chat.Row{{Buttons: []chat.Button{{Label: "Go", CustomID: "cb1|i|go"}}}}
	if err := w.p.Edit(ctx, ch, a, chat.Message{Content: long, Rows: rows}); err != nil {
		t.Fatal(err)
	}
	posts := w.posts(thread)
	last := posts[len(posts)-1]
	if len(posts) != 3 || last.ReplyMarkup == nil || posts[1].ReplyMarkup != nil {
		t.Fatalf("the rest of the edit: %d posts, keyboard on the last %v", len(posts), last.ReplyMarkup)
	}
	if got := len(strings.Fields(posts[1].Text + " " + last.Text)); got != 1500 {
		t.Errorf("%d words of 1500", got)
	}
	if _, _, ok := w.p.drawing(w.tg.ChatID, MessageID(w.tg.ChatID, last.MessageID)); !ok {
		t.Error("the keyboard moved to the last message is not recorded")
	}
}

func TestCommandOptions(t *testing.T) {
	thread := testCommands[1]
	for text, want := range map[string]map[string]string{
		"":                       {},
		"fix login":              {"name": "fix login"},
		"fix\nplease do it\nnow": {"name": "fix", "prompt": "please do it\nnow"},
	} {
		got := commandOptions(thread, text)
		if len(got) != len(want) || got["name"] != want["name"] || got["prompt"] != want["prompt"] {
			t.Errorf("%q: %v, want %v", text, got, want)
		}
	}
	if got := commandOptions(testCommands[2], "Accept edits"); got["mode"] != "acceptEdits" {
		t.Errorf("a choice by its label: %v", got)
	}
}

func TestPlainSplitCountsAsTelegramDoes(t *testing.T) {
	text := strings.Repeat("😀", 3000) // 6,000 UTF-16 units
	parts := PlainSplit(text)
	if len(parts) != 2 || units(parts[0]) > MaxText || parts[0]+parts[1] != text {
		t.Errorf("%d parts (%d units first)", len(parts), units(parts[0]))
	}
	if got := PlainSplit("a <b> & c"); len(got) != 1 || got[0] != "a &lt;b&gt; &amp; c" {
		t.Errorf("escaped: %q", got)
	}
}
