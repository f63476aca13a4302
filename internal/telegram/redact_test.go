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
