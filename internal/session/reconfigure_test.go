package session

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/config"
)

// After a reload the running session is left as it is, and the next one
// started gets the new [claude] command, args, env and prompt timeout.
func TestReconfigureReachesOnlyTheNextSession(t *testing.T) {
	m, panes, store, target := newManager(t)
	ctx := context.Background()
	if _, _, err := m.Ensure(ctx, target); err != nil {
		t.Fatal(err)
	}
	panes.mu.Lock()
	opsBefore := len(panes.ops)
	panes.mu.Unlock()

	cfg := *m.opt.Config
	cfg.Claude.Command, cfg.Claude.Args = "/opt/claude2", []string{"--debug"}
	cfg.Claude.Env = map[string]string{"CCBRIDGE_E2E_MARK": "two"}
	cfg.Claude.PromptTimeout = config.Duration{Duration: 7 * time.Minute}
	m.Reconfigure(&cfg)

	if _, started, err := m.Ensure(ctx, target); err != nil || started {
		t.Fatalf("Ensure of the running session = started %v, %v", started, err)
	}
	panes.mu.Lock()
	if len(panes.specs) != 1 || len(panes.ops) != opsBefore {
		t.Fatalf("the running session was touched: %q", panes.ops[opsBefore:])
	}
	panes.mu.Unlock()

	next := target
	next.Key, next.Window = "home-api-2", "home-api-2"
	if _, _, err := m.Ensure(ctx, next); err != nil {
		t.Fatal(err)
	}
	panes.mu.Lock()
	spec := panes.specs[1]
	panes.mu.Unlock()
	if !slices.Equal(spec.Argv[:2], []string{"/opt/claude2", "--debug"}) {
		t.Errorf("argv = %q", spec.Argv)
	}
	if spec.Env["CCBRIDGE_E2E_MARK"] != "two" || spec.Env["ANTHROPIC_BASE_URL"] != "" {
		t.Errorf("env = %q", spec.Env)
	}
	wait := claudehook.BridgeSettings("/bin/hs", "/bin/hp", 7*time.Minute).Hooks["PermissionRequest"][0].Hooks[0].Timeout
	if i := slices.Index(spec.Argv, "--settings"); i < 0 || !strings.Contains(spec.Argv[i+1], fmt.Sprintf(`"timeout":%d}`, wait)) {
		t.Errorf("the permission hook does not wait the new prompt timeout (%d s): %q", wait, spec.Argv)
	}
	if rec, _ := store.Sessions.Get("home-api-2"); rec.PromptTimeout != 7*time.Minute {
		t.Errorf("record prompt timeout = %s", rec.PromptTimeout)
	}
}
