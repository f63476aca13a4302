package gateway

import (
	"slices"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
)

// catcher is a recorder that also catches up: each catch-up is recorded in
// the channel's list of handled messages, as "catch-up", and waits on
// release, so a test can send messages while one runs.
type catcher struct {
	*recorder
	channels map[string]string
	release  chan struct{}
}

func (c *catcher) CatchUpChannels(string) map[string]string { return c.channels }

func (c *catcher) CatchUpThreads(string, map[string]string) (read, check map[string]string) {
	return nil, nil
}

func (c *catcher) ThreadAway(string, string, string, bool) {}

func (c *catcher) CatchUp(_, channelID, _ string) {
	c.mu.Lock()
	c.messages[channelID] = append(c.messages[channelID], "catch-up")
	c.mu.Unlock()
	c.poke()
	<-c.release
}

// TestReadyCatchesUpBeforeLiveMessages: on READY every channel the
// handler names is caught up, ahead of the messages that then arrive live
// in it; a new session (op 9) catches up again, a resume does not (Discord
// replays what it missed).
func TestReadyCatchesUpBeforeLiveMessages(t *testing.T) {
	srv := fakediscord.New(t)
	bot := srv.Main()
	owner := srv.NewUser("owner")
	c := &catcher{recorder: newRecorder(), channels: map[string]string{bot.ChannelID: ""}, release: make(chan struct{})}
	released := false
	defer func() {
		if !released {
			close(c.release)
		}
	}()
	openBot(t, srv, c)
	c.wait(t, "the catch-up", func() bool { return len(c.messages[bot.ChannelID]) == 1 })
	srv.Post(bot.ChannelID, owner, "live while catching up")
	time.Sleep(200 * time.Millisecond) // the live message is queued, not handled
	c.mu.Lock()
	got := slices.Clone(c.messages[bot.ChannelID])
	c.mu.Unlock()
	if len(got) != 1 {
		t.Fatalf("a live message was handled while the channel caught up: %q", got)
	}
	close(c.release)
	released = true
	c.wait(t, "the live message", func() bool { return len(c.messages[bot.ChannelID]) == 2 })
	inOrder(t, "after READY", c.messages[bot.ChannelID], []string{"catch-up", "live while catching up"})

	srv.DropGateway(bot) // resumed: nothing to read back
	srv.Post(bot.ChannelID, owner, "after the resume")
	c.wait(t, "the message after the resume", func() bool { return len(c.messages[bot.ChannelID]) == 3 })
	srv.InvalidateSession(bot) // a new session: events may be lost
	c.wait(t, "a second catch-up", func() bool { return len(c.messages[bot.ChannelID]) == 4 })
	inOrder(t, "after op 9", c.messages[bot.ChannelID], []string{"catch-up", "live while catching up", "after the resume", "catch-up"})
	if st := srv.Stats(); st.Resumes == 0 {
		t.Errorf("the drop was not resumed: %+v", st)
	}
}
