package discord

import (
	"context"
	"slices"
	"testing"
	"time"
)

func TestSendMentioningPingsExactlyTheListedUsers(t *testing.T) {
	srv, bot, p := newPoster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	owner, other := srv.NewUser("owner"), srv.NewUser("other")
	id, err := p.SendMentioning(ctx, bot.ChannelID, "", "<@"+owner.ID+"> waiting; not <@"+other.ID+"> nor @everyone", []string{owner.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got := srv.Mentioned(id); !slices.Equal(got, []string{owner.ID}) {
		t.Errorf("mentioned %v, want only the owner %s", got, owner.ID)
	}
	// Everything else ccbridge posts pings nobody.
	id, err = p.Send(ctx, bot.ChannelID, "<@"+owner.ID+"> relayed", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := srv.Mentioned(id); len(got) != 0 {
		t.Errorf("a relayed message mentioned %v", got)
	}
}
