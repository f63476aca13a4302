package discord

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestAfterReadsEveryPageInOrder: 250 messages after the cursor come back
// oldest first over three pages, a 429 and a 500 on the way honoured.
func TestAfterReadsEveryPageInOrder(t *testing.T) {
	srv, bot, p := newPoster(t)
	owner := srv.NewUser("owner")
	first := srv.Post(bot.ChannelID, owner, "cursor")
	for i := range 250 {
		srv.Post(bot.ChannelID, owner, fmt.Sprintf("m%03d", i))
	}
	srv.RateLimit("GET", "/channels/*/messages", 1, 200*time.Millisecond)
	srv.Fail("GET", "/channels/*/messages", 500, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got, err := p.After(ctx, bot.ChannelID, first.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 250 {
		t.Fatalf("%d messages, want 250", len(got))
	}
	for i, m := range got {
		if want := fmt.Sprintf("m%03d", i); m.Event.Content != want || m.Event.Author.ID != owner.ID || m.Event.ChannelID != bot.ChannelID {
			t.Fatalf("message %d = %+v, want %s from the owner", i, m.Event, want)
		}
	}
	pages := 0
	for _, c := range srv.Calls() {
		if c.Method == "GET" && strings.HasSuffix(c.Path, "/channels/"+bot.ChannelID+"/messages") && c.Status == 200 {
			pages++
		}
	}
	if pages != 3 {
		t.Errorf("%d pages read, want 3", pages)
	}
	latest, err := p.After(ctx, bot.ChannelID, "")
	if err != nil || len(latest) != 100 || latest[0].Event.Content != "m150" || latest[99].Event.Content != "m249" {
		t.Fatalf("latest page: %v, %d messages", err, len(latest))
	}
}

func TestAfterCarriesTimeAndTheBotsReactions(t *testing.T) {
	srv, bot, p := newPoster(t)
	owner := srv.NewUser("owner")
	m := srv.Post(bot.ChannelID, owner, "hello")
	ctx := context.Background()
	if err := p.React(ctx, bot.ChannelID, m.ID, "✅"); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
	srv.Backdate(m.ID, old)
	got, err := p.After(ctx, bot.ChannelID, "0")
	if err != nil || len(got) != 1 {
		t.Fatalf("%v %v", err, got)
	}
	if !got[0].At.Equal(old) || len(got[0].Marked) != 1 || got[0].Marked[0] != "✅" {
		t.Fatalf("got %+v", got[0])
	}
	one, err := p.MissedMessage(ctx, bot.ChannelID, m.ID)
	if err != nil || one.Event.Content != "hello" || !one.At.Equal(old) {
		t.Fatalf("one: %v %+v", err, one)
	}
}
