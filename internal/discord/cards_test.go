package discord

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
)

func TestCardInAnArchivedThreadClosesInTheParent(t *testing.T) {
	srv, bot, p := newPoster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	owner := srv.NewUser("owner")
	thread := srv.StartThread(bot.ChannelID, "work", owner)
	card := chat.Message{Content: "Allow `ls`?", Rows: []chat.Row{{Buttons: []chat.Button{{Label: "Allow", CustomID: "allow"}}}}}
	cardID, err := p.Post(ctx, thread, card)
	if err != nil {
		t.Fatal(err)
	}
	srv.AutoArchive(thread)
	closed := chat.Message{Content: "Allow `ls`?\n\n⌛ Expired."}
	for range 2 { // the hook and the daemon's sweeper may both close it
		if err := p.EditCard(ctx, thread, cardID, closed, "⌛ Expired."); err != nil {
			t.Fatalf("EditCard: %v", err)
		}
	}
	var notices []string
	for _, m := range srv.Messages(bot.ChannelID) {
		if m.Author.Bot {
			notices = append(notices, m.Content)
		}
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "<#"+thread+">") || !strings.Contains(notices[0], "⌛ Expired.") {
		t.Errorf("parent channel got %q, want one notice naming the thread and the outcome", notices)
	}
	if th, _ := srv.Channel(thread); !th.Archived {
		t.Error("the thread was unarchived")
	}
	if m, _ := srv.Message(cardID); m.Edits != 0 {
		t.Errorf("the card in the archived thread was edited %d times", m.Edits)
	}
}

func TestCardEditOutsideThreadsIsAnEdit(t *testing.T) {
	srv, bot, p := newPoster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	id, err := p.Post(ctx, bot.ChannelID, chat.Message{Content: "Allow?"})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.EditCard(ctx, bot.ChannelID, id, chat.Message{Content: "Allow?\n\nAllowed."}, "Allowed."); err != nil {
		t.Fatal(err)
	}
	if m, _ := srv.Message(id); m.Content != "Allow?\n\nAllowed." || len(srv.Messages(bot.ChannelID)) != 1 {
		t.Errorf("card = %q, %d messages", m.Content, len(srv.Messages(bot.ChannelID)))
	}
}

// TestCardsSuppressLinkPreviews (security review 3, finding 9): a card is
// bound to its face, and Discord adds a link preview to a message whose
// text links somewhere: a card, and every message with controls, is posted
// and edited with SUPPRESS_EMBEDS, so no preview ever joins its face.
// Messages without controls keep their previews.
func TestCardsSuppressLinkPreviews(t *testing.T) {
	srv, bot, p := newPoster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	card := chat.Message{Content: "**Bash**: fetch the docs (see https://docs.example/guide)\n```\ncurl https://docs.example/guide\n```",
		Rows: []chat.Row{{Buttons: []chat.Button{{Label: "Allow", CustomID: "allow"}}}}}
	cardID, _, err := p.PostCard(ctx, bot.ChannelID, card)
	if err != nil {
		t.Fatal(err)
	}
	postedID, err := p.Post(ctx, bot.ChannelID, card)
	if err != nil {
		t.Fatal(err)
	}
	plainID, err := p.Post(ctx, bot.ChannelID, chat.Message{Content: "Done: https://docs.example/guide"})
	if err != nil {
		t.Fatal(err)
	}
	redrawn := card
	redrawn.Content += "\nsee also https://docs.example/other"
	if err := p.Edit(ctx, bot.ChannelID, postedID, redrawn); err != nil {
		t.Fatal(err)
	}
	time.Sleep(fakediscord.PreviewDelay + 200*time.Millisecond)
	for _, id := range []string{cardID, postedID} {
		m, _ := srv.Message(id)
		if m.Flags&4 == 0 || len(m.Embeds) != 0 {
			t.Errorf("message %s with controls: flags %d, %d embeds", id, m.Flags, len(m.Embeds))
		}
	}
	if m, _ := srv.Message(plainID); m.Flags&4 != 0 || len(m.Embeds) != 1 {
		t.Errorf("a plain message: flags %d, %d embeds", m.Flags, len(m.Embeds))
	}
}
