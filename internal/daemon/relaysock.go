package daemon

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/ccbridge/ccbridge/internal/chat"
	hookrelay "github.com/ccbridge/ccbridge/internal/relay"
	"github.com/ccbridge/ccbridge/internal/state"
)

// serveRelay serves the hooks' posts on the socket in the runtime dir,
// each as the bot of the server it names (internal/relay). A post for a
// server not configured fails as transient, and stays in the hook's
// outbox until that bot is configured again, as the drain keeps it.
//
// Order: a hook posts a reply only under its channel's lock and only when
// the outbox holds nothing earlier for that channel; the drain takes the
// same lock. So what the hooks queued while the daemon was down goes out
// before anything relayed to the same channel after it starts.
func serveRelay(store *state.Store, posters map[string]chat.Poster, log *slog.Logger) (*hookrelay.Server, error) {
	return hookrelay.Listen(hookrelay.SocketPath(store.Dir.Root()), func(server string) (chat.Poster, bool) {
		p, ok := posters[server]
		return p, ok
	}, log.With("from", "relay"))
}

// forgetBotTokens rewrites every bot record, so that one an older daemon
// wrote (which held the bot's token for the hooks) holds it no more, also
// that of a server since removed from the config.
func forgetBotTokens(ctx context.Context, store *state.Store) error {
	keys, err := store.Bots.Keys()
	if err != nil {
		return fmt.Errorf("bot records: %w", err)
	}
	for _, k := range keys {
		if _, err := store.Bots.Update(ctx, k, func(*state.Bot) error { return nil }); err != nil {
			return fmt.Errorf("bot records: %w", err)
		}
	}
	return nil
}
