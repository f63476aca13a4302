package panel

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/state"
)

func TestPanelShowsContextAndLimitsPerProject(t *testing.T) {
	p, _ := newPanel(t, 2)
	ctx := context.Background()
	p.Store.Sessions.Update(ctx, "home-p0", func(s *state.Session) error { s.ClaudeSessionID = "c0"; return nil })
	statuses, _ := state.OpenStatuses(p.Store.Dir)
	statuses.Update(ctx, "c0", func(s *state.Status) error {
		*s = state.Status{Model: "Opus 5.5", CostUSD: 3, HasContext: true, ContextPct: 42,
			FiveHour: &state.Limit{UsedPct: 45, ResetsAt: time.Now().Add(90*time.Minute + 30*time.Second)}, SevenDay: &state.Limit{UsedPct: 12}}
		return nil
	})
	m := p.Render(ctx, "home")
	if !strings.Contains(m.Content, "`/src/p0` · ctx 42% · 5h 45% (resets 1h31m) · 7d 12%") {
		t.Errorf("panel lacks p0's figures:\n%s", m.Content)
	}
	if strings.Contains(m.Content, "Opus") || strings.Contains(m.Content, "$3") || strings.Contains(m.Content, "`/src/p1` ·") {
		t.Errorf("panel shows what it should not:\n%s", m.Content)
	}
}
