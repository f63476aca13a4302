package daemon

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/audit"
	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/state"
)

// What the daemon itself audits (the router's commits and merges) is
// masked like what the hooks audit.
func TestDaemonAuditRecordsAreMasked(t *testing.T) {
	store, err := state.OpenStore(filepath.Join(t.TempDir(), "rt"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse("")
	if err != nil {
		t.Fatal(err)
	}
	durable := t.TempDir()
	if err := writePolicies(context.Background(), store, cfg, durable); err != nil {
		t.Fatal(err)
	}
	if err := audit.Append(durable, audit.Entry{Kind: "commit", Asked: "git commit -m 'password=hunter2'"}); err != nil {
		t.Fatal(err)
	}
	got, err := audit.Last(durable, 1)
	if err != nil || len(got) != 1 {
		t.Fatalf("Last = %+v, %v", got, err)
	}
	if strings.Contains(got[0].Asked, "hunter2") {
		t.Fatalf("the audit log keeps the secret: %q", got[0].Asked)
	}
}
