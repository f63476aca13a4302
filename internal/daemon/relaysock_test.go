package daemon

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/discord"
	hookrelay "github.com/ccbridge/ccbridge/internal/relay"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
)

// The daemon's socket posts as the bot of the server a hook names, masks
// that bot's token like any post of the daemon's, and keeps a post for a
// server it has no bot for as transient (the hook's outbox keeps it).
func TestRelaySocketPostsAsTheServersBot(t *testing.T) {
	dir, err := os.MkdirTemp("", "ccbd") // short: a socket path has 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := state.OpenStore(filepath.Join(dir, "rt"))
	if err != nil {
		t.Fatal(err)
	}
	srv := fakediscord.New(t)
	bot := srv.Main()
	p, err := discord.NewPoster(srv.URL, bot.Token)
	if err != nil {
		t.Fatal(err)
	}
	sock, err := serveRelay(store, map[string]chat.Poster{"home": p}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer sock.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	path := hookrelay.SocketPath(store.Dir.Root())
	if fi, err := os.Lstat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket: %v, %v", fi, err)
	}
	c := hookrelay.NewClient(path, "home", p.Limit())
	id, err := c.PostOnce(ctx, bot.ChannelID, hookrelay.Nonce("k1"), chat.Message{Content: "hello; the token is " + bot.Token})
	if err != nil {
		t.Fatal(err)
	}
	msgs := srv.Messages(bot.ChannelID)
	if len(msgs) != 1 || msgs[0].ID != id || msgs[0].Content == "" || strings.Contains(msgs[0].Content, bot.Token) {
		t.Fatalf("messages = %+v", msgs)
	}
	if _, err := hookrelay.NewClient(path, "gone", 0).Post(ctx, bot.ChannelID, chat.Message{Content: "x"}); !errors.Is(err, chat.ErrTransient) {
		t.Fatalf("a server without a bot: %v", err)
	}
	if err := c.Edit(ctx, bot.ChannelID, "123456789012345678", chat.Message{Content: "y"}); !errors.Is(err, chat.ErrUnknownMessage) {
		t.Fatalf("edit of a gone message: %v", err)
	}
}

// A bot record an older daemon wrote, with its token, loses the token at
// start, also one of a server no longer configured.
func TestStartForgetsTheTokensOlderDaemonsWrote(t *testing.T) {
	store, err := state.OpenStore(filepath.Join(t.TempDir(), "rt"))
	if err != nil {
		t.Fatal(err)
	}
	old := `{"version":1,"updated_at":"2026-11-27T10:00:00Z","data":{"api_base":"https://discord.com","token":"zq.old-daemon-token.value","instance":"i1","prompt_timeout":60000000000}}`
	for _, name := range []string{"home", "removed"} {
		if err := os.WriteFile(filepath.Join(store.Dir.Root(), "bots", name+".json"), []byte(old), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := forgetBotTokens(context.Background(), store); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"home", "removed"} {
		b, err := os.ReadFile(filepath.Join(store.Dir.Root(), "bots", name+".json"))
		if err != nil || strings.Contains(string(b), "old-daemon-token") || strings.Contains(string(b), "api_base") {
			t.Errorf("%s: %s, %v", name, b, err)
		}
		if bot, err := store.Bots.Get(name); err != nil || bot.Instance != "i1" || bot.PromptTimeout != time.Minute {
			t.Errorf("%s: %+v, %v", name, bot, err)
		}
	}
}
