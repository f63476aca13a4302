package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ccbridge/ccbridge/internal/discord"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
)

// drainFixture is a runtime dir with an outbox and a fake Discord.
type drainFixture struct {
	store *state.Store
	srv   *fakediscord.Server
	bot   *fakediscord.Bot
}

func newDrainFixture(t *testing.T) *drainFixture {
	t.Helper()
	store, err := state.OpenStore(filepath.Join(t.TempDir(), "rt"))
	if err != nil {
		t.Fatal(err)
	}
	srv := fakediscord.New(t)
	return &drainFixture{store: store, srv: srv, bot: srv.Main()}
}

// relay returns a drainer as a daemon would run it, with its own poster.
func (f *drainFixture) relay(t *testing.T) *relay {
	t.Helper()
	p, err := discord.NewPoster(f.srv.URL, f.bot.Token)
	if err != nil {
		t.Fatal(err)
	}
	return &relay{store: f.store, posters: map[string]*discord.Poster{"home": p}, log: slog.New(slog.DiscardHandler), unknownLogged: map[string]bool{}}
}

func (f *drainFixture) queue(t *testing.T, contents ...string) {
	t.Helper()
	for _, c := range contents {
		if _, err := f.store.Outbox.Create(context.Background(), state.OutboxKey(), state.Outbound{Server: "home", ChannelID: f.bot.ChannelID, Content: c}); err != nil {
			t.Fatal(err)
		}
	}
}

func (f *drainFixture) contents() []string {
	var out []string
	for _, m := range f.srv.Messages(f.bot.ChannelID) {
		out = append(out, m.Content)
	}
	return out
}

// creates counts message create calls.
func (f *drainFixture) creates() int {
	n := 0
	for _, c := range f.srv.Calls() {
		if c.Method == "POST" && c.Path == "/channels/"+f.bot.ChannelID+"/messages" {
			n++
		}
	}
	return n
}

// Two drainers (two daemons, or a round that read its list before another
// posted) that both read the outbox before either takes the channel lock
// post each entry once: the list is read again under the lock.
func TestTwoDrainersPostEachEntryOnce(t *testing.T) {
	f := newDrainFixture(t)
	f.queue(t, "one", "two", "three")
	a, b := f.relay(t), f.relay(t)
	// Both read the outbox, then wait at the lock, which the test holds.
	hold, err := f.store.Dir.LockChannel(context.Background(), f.bot.ChannelID)
	if err != nil {
		t.Fatal(err)
	}
	var waiting sync.WaitGroup
	waiting.Add(2)
	for _, r := range []*relay{a, b} {
		r.lockChannel = func(ctx context.Context, ch string) (func(), error) {
			waiting.Done()
			return f.store.Dir.LockChannel(ctx, ch)
		}
	}
	var done sync.WaitGroup
	for _, r := range []*relay{a, b} {
		done.Add(1)
		go func() { defer done.Done(); r.drainOnce(context.Background()) }()
	}
	waiting.Wait()
	hold()
	done.Wait()
	if got := fmt.Sprint(f.contents()); got != "[one two three]" {
		t.Fatalf("posted %s", got)
	}
	if n := f.creates(); n != 3 {
		t.Fatalf("%d creates for 3 entries: an entry already posted was sent again", n)
	}
	if keys, _ := f.store.Outbox.Keys(); len(keys) != 0 {
		t.Fatalf("outbox = %v", keys)
	}
}

// A queued create that Discord made but answered with a 502 is posted once.
func TestDrainCreateAnswered502IsPostedOnce(t *testing.T) {
	f := newDrainFixture(t)
	f.queue(t, "queued")
	f.srv.FailAfterCreate("POST", "/channels/*/messages", 502, 1)
	f.relay(t).drainOnce(context.Background())
	if got := fmt.Sprint(f.contents()); got != "[queued]" {
		t.Fatalf("posted %s", got)
	}
}
