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
