package telegram

import (
	"context"
	"slices"
	"testing"

	"github.com/ccbridge/ccbridge/internal/testutil/faketelegram"
)

// Sightings reports people's messages with their chat; Confirm confirms
// what was read and nothing after it.
func TestSightingsConfirmOnlyWhatWasRead(t *testing.T) {
	tg := faketelegram.New(t)
	c, err := NewClient(tg.URL, tg.Token)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	read := tg.OwnerText(0, "hello").MessageID
	seen, next, err := c.Sightings(ctx, 0, 0)
	if err != nil || len(seen) != 1 || seen[0].From.ID != tg.Owner.ID || seen[0].Chat.ID != tg.ChatID || !seen[0].Chat.Forum() {
		t.Fatalf("sightings %+v %v (message %d)", seen, err, read)
	}
	tg.OwnerText(0, "for the daemon")
	if err := c.Confirm(ctx, next); err != nil {
		t.Fatal(err)
	}
	if p := tg.Pending(); len(p) != 1 || slices.Contains(p, seen[0].UpdateID) {
		t.Errorf("pending %v: want only the update after the one read", p)
	}
}

// Probe's answers: a refused token, the bot's rights, a member's standing.
func TestProbeAnswers(t *testing.T) {
	tg := faketelegram.New(t)
	ctx := context.Background()
	bad, _ := NewClient(tg.URL, "7000000001:wrong")
	if _, err := bad.Me(ctx); !IsRefusedToken(err) {
		t.Errorf("a wrong token: %v", err)
	}
	c, _ := NewClient(tg.URL, tg.Token)
	me, err := c.Me(ctx)
	if err != nil || me.ID != tg.Bot.ID || me.Label() != "@ccbridge_test_bot" {
		t.Fatalf("me %+v %v", me, err)
	}
	m, err := c.ChatMember(ctx, tg.ChatID, me.ID)
	if err != nil || !m.ManagesTopics() {
		t.Errorf("the bot: %+v %v", m, err)
	}
	tg.SetManageTopics(tg.ChatID, me.ID, false)
	if m, _ = c.ChatMember(ctx, tg.ChatID, me.ID); m.ManagesTopics() || m.Status != "administrator" {
		t.Errorf("without Manage topics: %+v", m)
	}
	stranger := tg.AddUser("Stranger", false)
	if m, err = c.ChatMember(ctx, tg.ChatID, stranger.ID); err != nil || m.In() {
		t.Errorf("a stranger: %+v %v", m, err)
	}
	if m, _ = c.ChatMember(ctx, tg.ChatID, tg.Owner.ID); !m.In() || !m.ManagesTopics() {
		t.Errorf("the creator: %+v", m)
	}
}
