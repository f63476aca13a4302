package daemon

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/state"
)

// The web view's session carries what the reply footer shows (the
// statusLine record of the session's Claude) and the session's cards, its
// own only, oldest first, with what was decided.
func TestWebSessionHasCardsAndFigures(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store, err := state.OpenStore(filepath.Join(dir, "rt"))
	if err != nil {
		t.Fatal(err)
	}
	registry, err := state.OpenRegistry(filepath.Join(dir, "durable"))
	if err != nil {
		t.Fatal(err)
	}
	statuses, err := state.OpenStatuses(store.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Sessions.Create(ctx, "home-app", state.Session{Server: "home", Project: "app", ClaudeSessionID: "c1"}); err != nil {
		t.Fatal(err)
	}
	if err := statuses.Cache(ctx, "c1", state.Status{Model: "Opus 5.5", HasContext: true, ContextPct: 42, CostUSD: 0.25}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	for id, r := range map[string]state.Request{
		"r2":    {Session: "home-app", ToolName: "AskUserQuestion", Status: state.RequestExpired, Created: t0.Add(time.Minute)},
		"r1":    {Session: "home-app", ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"touch x"}`), Status: state.RequestDecided, Outcome: "✅ **Allowed** by <@1>", Created: t0},
		"other": {Session: "home-other", ToolName: "Write", Status: state.RequestPending, Created: t0},
	} {
		if _, err := store.Requests.Create(ctx, id, r); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := newWebSessions(store, registry)
	if err != nil {
		t.Fatal(err)
	}
	s, ok := ws.Session("home-app")
	if !ok {
		t.Fatal("no session")
	}
	if s.Figures != "Opus 5.5 · ctx 42% · $0.25" {
		t.Errorf("figures %q", s.Figures)
	}
	if len(s.Cards) != 2 || s.Cards[0].Tool != "Bash" || s.Cards[0].Input != `{"command":"touch x"}` || s.Cards[0].Outcome != "✅ **Allowed** by <@1>" ||
		s.Cards[1].Tool != "AskUserQuestion" || s.Cards[1].Status != state.RequestExpired || !s.Cards[0].At.Equal(t0) {
		t.Errorf("cards %+v", s.Cards)
	}
}
