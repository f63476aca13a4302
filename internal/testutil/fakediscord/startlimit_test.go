package fakediscord

import (
	"testing"
	"time"
)

// GET /gateway/bot reports the bot's session starts left, and each
// IDENTIFY spends one.
func TestSessionStartLimit(t *testing.T) {
	srv := New(t)
	bot := srv.Main()
	srv.SetSessionStarts(bot, 40, time.Hour)
	dg := connect(t, srv, bot, nil)
	st, err := dg.GatewayBot()
	if err != nil {
		t.Fatal(err)
	}
	l := st.SessionStartLimit
	if l.Total != 1000 || l.Remaining != 39 || l.ResetAfter < 3_500_000 || l.ResetAfter > 3_600_000 || l.MaxConcurrency != 1 {
		t.Fatalf("session_start_limit after one IDENTIFY: %+v", l)
	}
	if srv.SessionStarts(bot) != 39 {
		t.Fatalf("starts left: %d", srv.SessionStarts(bot))
	}
}
