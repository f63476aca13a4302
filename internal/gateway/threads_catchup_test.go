package gateway

import (
	"slices"
	"sync"
	"testing"

	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
)

// threadCatcher records what it is told of the guild's threads once
// connected: the active ones (it reads them all back), and what the
// threads it knows (known, id → parent) turned out to be.
type threadCatcher struct {
	*recorder
	known map[string]string

	tmu    sync.Mutex
	active map[string]string
	read   []string // catch-ups, by channel
	away   []string // "<id> archived" or "<id> deleted"
}

func (c *threadCatcher) CatchUpChannels(string) map[string]string { return nil }

func (c *threadCatcher) CatchUp(_, channelID, _ string) {
	c.tmu.Lock()
	c.read = append(c.read, channelID)
	c.tmu.Unlock()
	c.poke()
}

func (c *threadCatcher) CatchUpThreads(_ string, active map[string]string) (read, check map[string]string) {
	c.tmu.Lock()
	c.active = active
	c.tmu.Unlock()
	check = map[string]string{}
	for id, parent := range c.known {
		if _, ok := active[id]; !ok {
			check[id] = parent
		}
	}
	return active, check
}

func (c *threadCatcher) ThreadAway(_, threadID, _ string, deleted bool) {
	c.tmu.Lock()
	if deleted {
		c.away = append(c.away, threadID+" deleted")
	} else {
		c.away = append(c.away, threadID+" archived")
	}
	c.tmu.Unlock()
	c.poke()
}

// Once connected, the guild's active threads (GUILD_CREATE) are offered for
// reading back (one started while ccbridge was away), and the threads
// ccbridge knows that are not active are looked up: archived meanwhile, or
// deleted meanwhile (fidelity-3 D3).
func TestGuildCreateCatchesUpActiveThreadsAndChecksTheOthers(t *testing.T) {
	srv := fakediscord.New(t)
	bot := srv.Main()
	owner := srv.NewUser("owner")
	started := srv.StartThread(bot.ChannelID, "started while away", owner)
	archived := srv.StartThread(bot.ChannelID, "archived while away", owner)
	srv.ArchiveThread(archived, false)
	deleted := srv.StartThread(bot.ChannelID, "deleted while away", owner)
	srv.DeleteThread(deleted)
	c := &threadCatcher{recorder: newRecorder(), known: map[string]string{archived: bot.ChannelID, deleted: bot.ChannelID}}
	openBot(t, srv, c)
	c.wait(t, "the threads' catch-up", func() bool {
		c.tmu.Lock()
		defer c.tmu.Unlock()
		return len(c.read) == 1 && len(c.away) == 2
	})
	c.tmu.Lock()
	defer c.tmu.Unlock()
	if c.active[started] != bot.ChannelID || len(c.active) != 1 {
		t.Errorf("active threads = %v, want %s under %s", c.active, started, bot.ChannelID)
	}
	if c.read[0] != started {
		t.Errorf("read back %q", c.read)
	}
	slices.Sort(c.away)
	want := []string{archived + " archived", deleted + " deleted"}
	slices.Sort(want)
	if !slices.Equal(c.away, want) {
		t.Errorf("threads away = %q, want %q", c.away, want)
	}
}
