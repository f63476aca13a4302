package hook

import (
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/discord"
	"github.com/ccbridge/ccbridge/internal/relay"
	"github.com/ccbridge/ccbridge/internal/state"
)

// fakeDaemon is the daemon's side of the hooks' posts in a runtime dir:
// its relay socket, in front of a Discord poster per bot, and the bot
// records it writes for the hooks.
type fakeDaemon struct {
	store   *state.Store
	srv     *relay.Server
	mu      sync.Mutex
	posters map[string]chat.Poster
}

func startDaemon(t *testing.T, store *state.Store) *fakeDaemon {
	t.Helper()
	d := &fakeDaemon{store: store, posters: map[string]chat.Poster{}}
	srv, err := relay.Listen(relay.SocketPath(store.Dir.Root()), d.poster, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	d.srv = srv
	t.Cleanup(d.stop)
	return d
}

func (d *fakeDaemon) poster(server string) (chat.Poster, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	p, ok := d.posters[server]
	return p, ok
}

// setBot makes server's bot the one with token on the Discord at apiBase,
// as a daemon started with that config would.
func (d *fakeDaemon) setBot(t *testing.T, server, apiBase, token string) {
	t.Helper()
	p, err := discord.NewPoster(apiBase, token)
	if err != nil {
		t.Fatal(err)
	}
	d.mu.Lock()
	d.posters[server] = p
	d.mu.Unlock()
	if _, err := d.store.Bots.Update(context.Background(), server, func(*state.Bot) error { return nil }); err != nil {
		t.Fatal(err)
	}
}

// stop stops the daemon: its socket is gone, its records stay.
func (d *fakeDaemon) stop() { d.srv.Close() }
