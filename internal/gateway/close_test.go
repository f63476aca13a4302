package gateway

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Closing the bot on a normal stop is no disconnection to warn about.
func TestCloseLogsNoReconnect(t *testing.T) {
	srv := fakediscord.New(t)
	bot := srv.Main()
	t.Setenv("CCBRIDGE_GW_TEST_TOKEN", bot.Token)
	var logs syncBuffer
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := Open(ctx, slog.New(slog.NewTextHandler(&logs, nil)), srv.URL,
		config.Server{Name: "home", TokenEnv: "CCBRIDGE_GW_TEST_TOKEN", GuildID: bot.GuildID}, newRecorder(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // a Disconnect handler run late would log now
	if strings.Contains(logs.String(), "reconnecting") || strings.Contains(logs.String(), "resumed") {
		t.Errorf("a normal close logs a reconnect:\n%s", logs.String())
	}
}
