package telegram

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/chat"
)

// Every text sent to Telegram is masked, whoever built it, and the bot's
// own token too; a file that holds a secret is not uploaded (security
// review of the Telegram front end: the group may hold more than owners).
func TestWhatTelegramIsSentIsMasked(t *testing.T) {
	w := newWorld(t)
	ch, thread := w.topic("api")
	ctx := context.Background()
	secret := "ghp_" + strings.Repeat("a1B2", 9)
	rows := []chat.Row{{Buttons: []chat.Button{{Label: "ok " + secret, CustomID: "cb1|inst|ok"}}}}
	if _, err := w.p.Post(ctx, ch, chat.Message{Content: "the key is " + secret + " and the bot is " + w.tg.Token, Rows: rows}); err != nil {
		t.Fatal(err)
	}
	for _, c := range w.tg.Calls() {
		for k, v := range c.Params {
			if strings.Contains(v, secret) || strings.Contains(v, w.tg.Token) {
				t.Errorf("%s %s carried a secret: %s", c.Method, k, v)
			}
		}
	}
	posts := w.posts(thread)
	if len(posts) != 1 || !strings.Contains(posts[0].Text, "[redacted GitHub token]") || !strings.Contains(posts[0].Text, "[redacted") {
		t.Fatalf("posted: %+v", posts)
	}
	_, err := w.p.Post(ctx, ch, chat.Message{Content: "the file", Files: []chat.File{{Name: ".env", Data: []byte("TOKEN=" + secret + "\n")}}})
	if !errors.Is(err, ErrSecretInFile) {
		t.Fatalf("a file with a secret: err = %v", err)
	}
	if n := len(w.tg.CallsTo("sendDocument")); n != 0 {
		t.Fatalf("%d documents uploaded", n)
	}
}

// A link button (the web view's capability) is never drawn in a topic,
// which every member of the group reads; the other buttons are.
func TestLinkButtonsAreLeftOut(t *testing.T) {
	w := newWorld(t)
	ch, thread := w.topic("api")
	rows := []chat.Row{{Buttons: []chat.Button{{Label: "Open in browser", URL: "http://127.0.0.1:7878/s/tok/"}, {Label: "Merge this", CustomID: "cb1|inst|merge"}}}}
	if _, err := w.p.Post(context.Background(), ch, chat.Message{Content: "the diff", Rows: rows}); err != nil {
		t.Fatal(err)
	}
	posts := w.posts(thread)
	if len(posts) != 1 || posts[0].ReplyMarkup == nil || len(posts[0].ReplyMarkup.InlineKeyboard[0]) != 1 || posts[0].ReplyMarkup.InlineKeyboard[0][0].Text != "Merge this" {
		t.Fatalf("posted: %+v", posts)
	}
	for _, c := range w.tg.Calls() {
		if strings.Contains(c.Params["reply_markup"], "/s/tok/") {
			t.Fatalf("the link went out: %s", c.Params["reply_markup"])
		}
	}
}

// The core's Discord markup is not shown raw: a channel is a link to its
// forum topic, a timestamp the time in UTC; other angle brackets stay.
func TestDiscordMarkupIsRendered(t *testing.T) {
	got := undiscord("⚪ api <#-1001234567890.42> in <#-1001234567890>, checked in <t:1795865714:R>; a <b> and <#123> and <#x")
	want := "⚪ api [topic 42](https://t.me/c/1234567890/42) in [the group](https://t.me/c/1234567890), checked in 2026-11-28 11:35 UTC; a <b> and <#123> and <#x"
	if got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	chunks := render("<#-1001234567890.42>")
	if len(chunks) != 1 || !strings.Contains(chunks[0], `<a href="https://t.me/c/1234567890/42">topic 42</a>`) {
		t.Fatalf("rendered %q", chunks)
	}
}
