package discord

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
)

func newPoster(t *testing.T) (*fakediscord.Server, *fakediscord.Bot, *Poster) {
	t.Helper()
	srv := fakediscord.New(t)
	bot := srv.Main()
	p, err := NewPoster(srv.URL, bot.Token)
	if err != nil {
		t.Fatal(err)
	}
	return srv, bot, p
}

func TestSendRetriesFailuresThenPostsOnce(t *testing.T) {
	srv, bot, p := newPoster(t)
	srv.Fail("POST", "/channels/*/messages", 500, 3)
	srv.RateLimit("POST", "/channels/*/messages", 1, 300*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	id, err := p.Send(ctx, bot.ChannelID, "hi @everyone", []chat.File{{Name: "a.txt", Data: []byte("A")}})
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) < 300*time.Millisecond {
		t.Error("retry_after of the 429 was not honoured")
	}
	msgs := srv.Messages(bot.ChannelID)
	if len(msgs) != 1 || msgs[0].ID != id || string(msgs[0].Files[0].Data) != "A" {
		t.Fatalf("messages = %+v", msgs)
	}
	if !strings.Contains(string(msgs[0].AllowedMentions), `"parse":[]`) {
		t.Errorf("mentions not disabled: %s", msgs[0].AllowedMentions)
	}
}

func TestSendGivesUpTransientlyAtTheDeadline(t *testing.T) {
	srv, bot, p := newPoster(t)
	srv.Fail("POST", "/channels/*/messages", 503, 1000)
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	_, err := p.Send(ctx, bot.ChannelID, "hi", nil)
	if !errors.Is(err, ErrTransient) {
		t.Fatalf("err = %v, want ErrTransient", err)
	}
	if len(srv.Messages(bot.ChannelID)) != 0 {
		t.Fatal("a message was posted")
	}
}

func TestSendPermanentErrorIsNotRetried(t *testing.T) {
	srv, bot, p := newPoster(t)
	_, err := p.Send(context.Background(), bot.ChannelID, strings.Repeat("x", 2001), nil)
	if err == nil || errors.Is(err, ErrTransient) {
		t.Fatalf("err = %v, want a permanent error", err)
	}
	if n := len(srv.Calls()); n != 1 {
		t.Errorf("%d calls, want 1", n)
	}
}

func TestDownloadLimit(t *testing.T) {
	srv, bot, p := newPoster(t)
	m := srv.Post(bot.ChannelID, srv.NewUser("u"), "x", fakediscord.File{Name: "f.bin", Data: []byte("0123456789")})
	url := srv.URL + "/attachments/" + m.ChannelID + "/" + m.ID + "0/f.bin"
	if b, err := p.Download(context.Background(), url, 10); err != nil || string(b) != "0123456789" {
		t.Fatalf("Download = %q, %v", b, err)
	}
	if _, err := p.Download(context.Background(), url, 9); err == nil || !strings.Contains(err.Error(), "larger than 9") {
		t.Fatalf("over the limit: %v", err)
	}
}
