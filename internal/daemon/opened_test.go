package daemon

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
)

// A folder opened with /open has the default attention settings (footer,
// mirrored prompts, pings after a minute) and its server's owners, for the
// hooks and for the daemon's pings alike.
func TestOpenedFoldersHaveTheDefaultAttention(t *testing.T) {
	f := newDrainFixture(t)
	ext, _ := state.OpenExtras(f.store.Dir)
	cfg := &config.Config{Servers: []config.Server{{Name: "home", OwnerIDs: []string{"1"}, Projects: []config.Project{{Name: "api"}}}}}
	if err := writePrefs(context.Background(), ext, cfg); err != nil {
		t.Fatal(err)
	}
	p, err := ext.Prefs.Get(state.PrefsKey("home", session.OpenedProject))
	if err != nil {
		t.Fatal(err)
	}
	if got := p.For("77"); !got.Footer || !got.MirrorTerminal || got.AttentionAfter != time.Minute || !slices.Equal(p.Owners, []string{"1"}) {
		t.Errorf("prefs %+v", p)
	}
	a := &attention{cfg: cfg}
	prefs, owners, ok := a.settings(state.Session{Server: "home", Project: session.OpenedProject, ThreadID: "77"})
	if !ok || prefs.AttentionAfter != time.Minute || !slices.Equal(owners, []string{"1"}) {
		t.Errorf("settings = %+v, %v, %v", prefs, owners, ok)
	}
}

// A folder opened with /open has the top-level [policy]: its scope is
// written, and no project's rules reach it.
func TestOpenedFoldersHaveTheGlobalPolicy(t *testing.T) {
	f := newDrainFixture(t)
	cfg := &config.Config{Policy: config.Policy{Deny: []string{"Bash(rm *)"}}, Servers: []config.Server{{Name: "home",
		Projects: []config.Project{{Name: "api", Policy: config.Policy{Deny: []string{"Write(.env*)"}}}}}}}
	if err := writePolicies(context.Background(), f.store, cfg, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	c, err := state.OpenPolicies(f.store.Dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Get(state.PoliciesKey)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Rules("home", session.OpenedProject, "77"); !slices.Equal(got.Deny, []string{"Bash(rm *)"}) || len(got.Ask) != 0 {
		t.Errorf("an opened folder's rules: %+v", got)
	}
}
