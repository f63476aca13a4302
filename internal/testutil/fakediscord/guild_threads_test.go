package fakediscord

import (
	"errors"
	"slices"
	"testing"

	"github.com/bwmarrin/discordgo"
)

// GUILD_CREATE carries "all active threads in the guild that the current
// user has permission to view": archived and deleted ones are not in it.
// GET /channels/{id} of an archived thread says so in thread_metadata; of a
// deleted one, 404 10003 (ccbridge's catch-up relies on all three).
func TestGuildCreateListsActiveThreads(t *testing.T) {
	srv := New(t)
	bot := srv.Main()
	owner := srv.NewUser("owner")
	active := srv.StartThread(bot.ChannelID, "active", owner)
	archived := srv.StartThread(bot.ChannelID, "archived", owner)
	srv.ArchiveThread(archived, false)
	deleted := srv.StartThread(bot.ChannelID, "deleted", owner)
	srv.DeleteThread(deleted)
	got := make(chan []*discordgo.Channel, 1)
	dg := connect(t, srv, bot, func(dg *discordgo.Session) {
		dg.AddHandler(func(_ *discordgo.Session, g *discordgo.GuildCreate) { got <- g.Threads })
	})
	threads := recv(t, got)
	var ids []string
	for _, th := range threads {
		ids = append(ids, th.ID)
		if th.ParentID != bot.ChannelID || th.ThreadMetadata == nil || th.ThreadMetadata.Archived {
			t.Errorf("thread %+v", th)
		}
	}
	if !slices.Equal(ids, []string{active}) {
		t.Fatalf("GUILD_CREATE threads = %v, want only %s", ids, active)
	}
	ch, err := dg.Channel(archived)
	if err != nil || ch.ThreadMetadata == nil || !ch.ThreadMetadata.Archived {
		t.Fatalf("GET the archived thread: %+v, %v", ch, err)
	}
	var rest *discordgo.RESTError
	if _, err := dg.Channel(deleted); !errors.As(err, &rest) || rest.Message == nil || rest.Message.Code != discordgo.ErrCodeUnknownChannel {
		t.Fatalf("GET the deleted thread: %v", err)
	}
}
