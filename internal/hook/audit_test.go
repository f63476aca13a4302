package hook

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/ccbridge/ccbridge/internal/audit"
	"github.com/ccbridge/ccbridge/internal/state"
)

// A permission's audit entry names its project, also for a session of
// another front end (ccbridge mcp) working in a project's directory.
func TestPermissionAuditNamesTheProject(t *testing.T) {
	store, err := state.OpenStore(filepath.Join(t.TempDir(), "rt"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	store.Routes.Update(ctx, state.RoutesKey, func(r *state.Routes) error {
		r.Routes = []state.Route{{Path: "/w/app", Server: "home", Project: "api", ChannelID: "100"}}
		return nil
	})
	store.Sessions.Update(ctx, "home-api", func(s *state.Session) error { s.Server, s.Project, s.Cwd = "home", "api", "/w/app"; return nil })
	store.Sessions.Update(ctx, "mcp@x", func(s *state.Session) error { s.Cwd = "/w/app/sub"; return nil })
	dir := t.TempDir()
	h := &handler{store: store, log: slog.New(slog.DiscardHandler), policies: state.Policies{AuditDir: dir}}
	h.auditRequest(state.Request{Session: "home-api", Server: "home", ToolName: "Bash", Status: state.RequestExpired})
	h.auditRequest(state.Request{Session: "mcp@x", ToolName: "Bash", Status: state.RequestExpired})
	got, err := audit.Last(dir, 2)
	if err != nil || len(got) != 2 {
		t.Fatalf("Last = %+v, %v", got, err)
	}
	for _, e := range got {
		if e.Server != "home" || e.Project != "api" {
			t.Errorf("entry of %s = %+v", e.Session, e)
		}
	}
}

// A card decided on a Telegram server is audited as Telegram's: the
// daemon records each server's platform with the route table; a record
// written before it knew platforms reads as Discord, as every server then was.
func TestCardDecisionAuditedAsItsServersPlatform(t *testing.T) {
	store, err := state.OpenStore(filepath.Join(t.TempDir(), "rt"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	store.Routes.Update(ctx, state.RoutesKey, func(r *state.Routes) error {
		r.Routes = []state.Route{{Path: "/w/app", Server: "tg", Project: "api", ChannelID: "-100"}, {Path: "/w/old", Server: "home", Project: "web"}}
		r.Platforms = map[string]string{"tg": audit.FromTelegram}
		return nil
	})
	dir := t.TempDir()
	h := &handler{store: store, log: slog.New(slog.DiscardHandler), policies: state.Policies{AuditDir: dir}}
	allow := []byte(`{"behavior":"allow"}`)
	h.auditRequest(state.Request{Session: "tg-api", Server: "tg", ToolName: "Bash", Status: state.RequestDecided, Decision: allow, Outcome: "✅ **Allowed** by <@42>"})
	h.auditRequest(state.Request{Session: "home-web", Server: "home", ToolName: "Bash", Status: state.RequestDecided, Decision: allow, Outcome: "✅ **Allowed** by <@7>"})
	got, err := audit.Last(dir, 2)
	if err != nil || len(got) != 2 {
		t.Fatalf("Last = %+v, %v", got, err)
	}
	want := map[string][2]string{"tg": {audit.FromTelegram, "42"}, "home": {audit.FromDiscord, "7"}}
	for _, e := range got {
		if w := want[e.Server]; e.From != w[0] || e.Who != w[1] {
			t.Errorf("entry of %s: from %q who %q, want %q %q", e.Server, e.From, e.Who, w[0], w[1])
		}
	}
}
