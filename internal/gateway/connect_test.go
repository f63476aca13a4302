package gateway

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
)

// A bot whose daily session starts are nearly spent is not connected:
// past them Discord resets the token (fidelity review 3, D5). Open says
// why and when to try again, and spends no IDENTIFY.
func TestOpenKeepsTheLastSessionStarts(t *testing.T) {
	srv := fakediscord.New(t)
	bot := srv.Main()
	srv.SetSessionStarts(bot, StartReserve-1, 90*time.Minute)
	t.Setenv("CCBRIDGE_GW_TEST_TOKEN", bot.Token)
	cfg := config.Server{Name: "home", TokenEnv: "CCBRIDGE_GW_TEST_TOKEN", GuildID: bot.GuildID}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := Open(ctx, slog.New(slog.DiscardHandler), srv.URL, cfg, newRecorder(), nil)
	if err == nil {
		b.Close()
		t.Fatal("connected with the last session starts")
	}
	var sl *StartLimitError
	if !errors.As(err, &sl) || sl.ResetAfter < 89*time.Minute || sl.ResetAfter > 90*time.Minute || !strings.Contains(err.Error(), "token") {
		t.Fatalf("err = %v", err)
	}
	if n := srv.Stats().Identifies; n != 0 || srv.SessionStarts(bot) != StartReserve-1 {
		t.Fatalf("%d IDENTIFYs; %d starts left", n, srv.SessionStarts(bot))
	}
	// With enough left, it connects.
	srv.SetSessionStarts(bot, StartReserve, time.Hour)
	b, err = Open(ctx, slog.New(slog.DiscardHandler), srv.URL, cfg, newRecorder(), nil)
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
}
