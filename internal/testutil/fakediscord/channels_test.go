package fakediscord

import (
	"errors"
	"testing"

	"github.com/bwmarrin/discordgo"
)

// A deleted channel comes as CHANNEL_DELETE, and is gone for REST with its
// threads: Discord's 404 10003, which ccbridge takes for "no longer
// exists".
func TestDeletedChannelAndItsThreadsAnswerUnknownChannel(t *testing.T) {
	srv := New(t)
	bot := srv.Main()
	ch := srv.AddChannel(bot.GuildID, "doomed")
	th := srv.StartThread(ch, "inside", srv.NewUser("u"))
	got := make(chan *discordgo.Channel, 1)
	dg := connect(t, srv, bot, func(dg *discordgo.Session) {
		dg.AddHandler(func(_ *discordgo.Session, c *discordgo.ChannelDelete) { got <- c.Channel })
	})
	srv.DeleteChannel(ch)
	if c := recv(t, got); c.ID != ch || c.GuildID != bot.GuildID || c.Type != discordgo.ChannelTypeGuildText {
		t.Errorf("CHANNEL_DELETE carried %+v", c)
	}
	for _, id := range []string{ch, th} {
		_, err := dg.ChannelMessageSend(id, "hello")
		var rest *discordgo.RESTError
		if !errors.As(err, &rest) || rest.Message == nil || rest.Message.Code != discordgo.ErrCodeUnknownChannel {
			t.Errorf("post in %s after the delete: %v", id, err)
		}
	}
}
