package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/panel"
	"github.com/ccbridge/ccbridge/internal/router"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/web"
	"github.com/ccbridge/ccbridge/internal/weblink"
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

// A reloaded [web] link_ttl is live, as the reload notice says: the links
// made from then on live that long.
func TestReloadedLinkTTLReachesTheWebView(t *testing.T) {
	t.Setenv("CCBRIDGE_RELOAD_TOKEN", "tok-0123456789")
	dir := t.TempDir()
	cfg, err := config.Parse(fmt.Sprintf(reloadTOML, "one", dir))
	if err != nil {
		t.Fatal(err)
	}
	store, err := state.OpenStore(filepath.Join(t.TempDir(), "rt"))
	if err != nil {
		t.Fatal(err)
	}
	ext, err := state.OpenExtras(store.Dir)
	if err != nil {
		t.Fatal(err)
	}
	durable := filepath.Join(t.TempDir(), "durable")
	registry, err := state.OpenRegistry(durable)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sessions, err := session.New(session.Options{Config: cfg, Store: store, HookStop: "/bin/hs", HookPretool: "/bin/hp"})
	if err != nil {
		t.Fatal(err)
	}
	rt := router.New(ctx, router.Options{Config: cfg, Store: store})
	defer rt.Wait()
	log := slog.New(slog.DiscardHandler)
	h, err := webHandler(cfg, store, registry, durable, log)
	if err != nil {
		t.Fatal(err)
	}
	links := &web.Links{H: h}
	parts := &liveParts{store: store, ext: ext, durable: durable, sessions: sessions, router: rt, panel: &panel.Panel{Config: cfg, Store: store},
		attention: &attention{cfg: cfg}, web: links, log: log}
	if _, exp := links.SessionLink("home-api"); time.Until(exp) > web.DefaultLinkTTL {
		t.Fatalf("a link lives %v before the reload", time.Until(exp))
	}

	next, err := config.Parse(fmt.Sprintf(reloadTOML, "one", dir) + "[web]\nlink_ttl = \"2h\"\n")
	if err != nil {
		t.Fatal(err)
	}
	if err := parts.apply(ctx, next); err != nil {
		t.Fatal(err)
	}
	if _, exp := links.SessionLink("home-api"); time.Until(exp) > 2*time.Hour || time.Until(exp) < 2*time.Hour-time.Minute {
		t.Errorf("after link_ttl = 2h a link lives %v", time.Until(exp))
	}
}

// An address already in use (a second daemon, another program) leaves the
// web view out, says so in the log, and is no error: the bridge runs on.
func TestWebAddressInUseLeavesTheViewOut(t *testing.T) {
	t.Setenv("CCBRIDGE_RELOAD_TOKEN", "tok-0123456789")
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	cfg, err := config.Parse(fmt.Sprintf(reloadTOML, "one", t.TempDir()) + fmt.Sprintf("[web]\nlisten = %q\n", busy.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	store, err := state.OpenStore(filepath.Join(t.TempDir(), "rt"))
	if err != nil {
		t.Fatal(err)
	}
	durable := filepath.Join(t.TempDir(), "durable")
	registry, err := state.OpenRegistry(durable)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	view, links := startWeb(cfg, store, registry, durable, slog.New(slog.NewTextHandler(&logs, nil)))
	if view != nil {
		t.Fatal("a web view was started on an address in use")
	}
	// /web says the view could not start, and why, not that it is off.
	if down, ok := links.(weblink.Down); !ok || !strings.Contains(down.Err.Error(), "address already in use") {
		t.Errorf("links = %#v, want weblink.Down with the reason", links)
	}
	if !strings.Contains(logs.String(), "the web view cannot start; the bridge runs on without it") || !strings.Contains(logs.String(), "address already in use") {
		t.Errorf("the log does not say why:\n%s", logs.String())
	}
}
