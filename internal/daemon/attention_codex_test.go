package daemon

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/state"
)

// The ping for a card a Codex session waits on says Codex (issue 29).
func TestAttentionPingNamesTheSessionsAgent(t *testing.T) {
	f := newDrainFixture(t)
	owner := f.srv.NewUser("owner").ID
	now := time.Now()
	a := newAttention(t, f, owner, time.Minute, &now)
	ctx := context.Background()
	if _, err := f.store.Sessions.Update(ctx, "home-api", func(s *state.Session) error { s.Agent = config.AgentCodex; return nil }); err != nil {
		t.Fatal(err)
	}
	f.store.Requests.Create(ctx, "req1", state.Request{Session: "home-api", Server: "home", ChannelID: f.bot.ChannelID, Status: state.RequestPending, Created: now})
	now = now.Add(61 * time.Second)
	a.once(ctx)
	if got := f.pings(t, owner); len(got) != 1 || !strings.HasPrefix(got[0], "<@"+owner+"> Codex has been waiting 1m1s for your answer") {
		t.Fatalf("pings %q", got)
	}
}
