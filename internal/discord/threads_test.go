package discord

import (
	"context"
	"slices"
	"testing"

	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
)

// A private thread is seen by its members alone: the owner added, not
// another member of a channel everyone can read.
func TestStartPrivateThreadAddsTheMembersAndHidesIt(t *testing.T) {
	srv, bot, p := newPoster(t)
	owner, other, stranger := srv.NewUser("owner"), srv.NewUser("other-owner"), srv.NewUser("stranger")
	ctx := context.Background()
	public, err := p.EveryoneCanView(ctx, bot.ChannelID)
	if err != nil || !public {
		t.Fatalf("EveryoneCanView of a channel @everyone sees: %v, %v", public, err)
	}
	id, missed, err := p.StartPrivateThread(ctx, bot.ChannelID, "api", []string{owner.ID, other.ID, "not-a-user"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(missed, []string{"not-a-user"}) {
		t.Errorf("missed = %q", missed)
	}
	th, ok := srv.Channel(id)
	if !ok || th.Type != 12 || th.Invitable || th.ParentID != bot.ChannelID {
		t.Fatalf("thread = %+v", th)
	}
	if got := srv.ThreadMembers(id); !slices.Equal(got, []string{bot.UserID, owner.ID, other.ID}) {
		t.Errorf("members = %q", got)
	}
	if !srv.CanView(bot, id, owner.ID) || srv.CanView(bot, id, stranger.ID) || !srv.CanView(bot, bot.ChannelID, stranger.ID) {
		t.Error("the private thread is not seen by its members alone")
	}
	for _, m := range srv.Messages(bot.ChannelID) {
		if m.Type == 18 {
			t.Errorf("a private thread was announced in its channel: %+v", m)
		}
	}

	// A channel hidden from @everyone is not public.
	srv.SetOverwrite(bot, bot.ChannelID, bot.GuildID, fakediscord.OverwriteRole, 0, fakediscord.PermViewChannel)
	if public, err := p.EveryoneCanView(ctx, bot.ChannelID); err != nil || public {
		t.Errorf("EveryoneCanView of a private channel: %v, %v", public, err)
	}
}

// Without Create Private Threads no thread is made; when the first member
// cannot be added, the thread made is deleted again.
func TestStartPrivateThreadFailsWhole(t *testing.T) {
	srv, bot, p := newPoster(t)
	owner := srv.NewUser("owner")
	ctx := context.Background()
	srv.DenyBotInChannel(bot, bot.ChannelID, fakediscord.PermCreatePrivateThreads)
	if _, _, err := p.StartPrivateThread(ctx, bot.ChannelID, "api", []string{owner.ID}); HTTPStatus(err) != 403 {
		t.Errorf("without Create Private Threads: %v", err)
	}
	srv.SetOverwrite(bot, bot.ChannelID, bot.UserID, fakediscord.OverwriteMember, 0, 0)
	if _, _, err := p.StartPrivateThread(ctx, bot.ChannelID, "api", []string{"not-a-user"}); err == nil {
		t.Fatal("a private thread nobody can see was kept")
	}
	if th := srv.Threads(bot.ChannelID); len(th) != 0 {
		t.Errorf("threads left: %+v", th)
	}
}
