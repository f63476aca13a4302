package discord

import (
	"context"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
)

// The core's message references reach Discord as jump links into the
// poster's server, in a post, a notice and an edit alike.
func TestMessageRefsBecomeJumpLinks(t *testing.T) {
	srv, bot, p := newPoster(t)
	p.Guild = bot.GuildID
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ref := chat.MessageRef{ChannelID: bot.ChannelID, MessageID: "123", Label: "This message"}.String()
	want := "⚠️ [This message](https://discord.com/channels/" + bot.GuildID + "/" + bot.ChannelID + "/123) was sent"
	id, err := p.Post(ctx, bot.ChannelID, chat.Message{Content: "⚠️ " + ref + " was sent"})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Notice(ctx, bot.ChannelID, "⚠️ "+ref+" was sent", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	msgs := srv.Messages(bot.ChannelID)
	if len(msgs) != 2 || msgs[0].Content != want || msgs[1].Content != want {
		t.Fatalf("messages = %+v, want both %q", msgs, want)
	}
	if err := p.Edit(ctx, bot.ChannelID, id, chat.Message{Content: "📨 Delivering " + ref + " now"}); err != nil {
		t.Fatal(err)
	}
	if got := srv.Messages(bot.ChannelID)[0].Content; got != "📨 Delivering [This message](https://discord.com/channels/"+bot.GuildID+"/"+bot.ChannelID+"/123) now" {
		t.Errorf("edited: %q", got)
	}
}

// Without its server a poster cannot make a link: the label stays.
func TestMessageRefsWithoutAGuildAreText(t *testing.T) {
	if got := Refs("", "see "+chat.MessageRef{ChannelID: "1", MessageID: "2", Label: "this message"}.String()); got != "see this message" {
		t.Errorf("got %q", got)
	}
}

// A clicked message's content comes back as the core drew it: the jump
// links Refs made are references again (the guard compares the face the
// core drew), and nothing else changes, another server's link included.
func TestUnrefsUndoesRefs(t *testing.T) {
	drawn := "⚠️ " + chat.MessageRef{ChannelID: "10", MessageID: "20", Label: "This message"}.String() + " was sent; see " +
		chat.MessageRef{ChannelID: "11", MessageID: "21", Label: "that one"}.String() + "."
	if got := Unrefs("7", Refs("7", drawn)); got != drawn {
		t.Errorf("round trip: %q, want %q", got, drawn)
	}
	for _, keep := range []string{
		"[x](https://discord.com/channels/8/10/20)", // another server's
		"[a|b](https://discord.com/channels/7/10/20)",
		"https://discord.com/channels/7/10/20",
		"[x](https://discord.com/channels/7/10)",
	} {
		if got := Unrefs("7", keep); got != keep {
			t.Errorf("Unrefs(%q) = %q", keep, got)
		}
	}
}
