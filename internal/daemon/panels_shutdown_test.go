package daemon

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/guard"
	"github.com/ccbridge/ccbridge/internal/state"
)

// postThenStop is a poster whose Post succeeds as the daemon is told to
// stop: the message exists on the platform, the caller's context is done.
type postThenStop struct {
	chat.Poster
	stop func()
}

func (p postThenStop) Post(ctx context.Context, channel string, m chat.Message) (string, error) {
	p.stop()
	return "m1", nil
}

// A panel posted just as the daemon stops is remembered and bound: the
// next start edits it instead of posting a second one whose older copy
// keeps live buttons.
func TestPanelPostedAtShutdownIsRemembered(t *testing.T) {
	dir := t.TempDir()
	store, err := state.OpenStore(filepath.Join(dir, "rt"))
	if err != nil {
		t.Fatal(err)
	}
	registry, err := state.OpenRegistry(filepath.Join(dir, "durable"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	bindings, err := state.OpenBindings(registry.Dir)
	if err != nil {
		t.Fatal(err)
	}
	g := guard.New(bindings)
	r := &relay{store: store, registry: registry, guard: g, log: slog.New(slog.DiscardHandler),
		posters: map[string]chat.Poster{"home": postThenStop{stop: stop}}}
	m := chat.Message{Content: "panel", Rows: []chat.Row{{Buttons: []chat.Button{{CustomID: "panel:start", Label: "Start"}}}}}
	if !r.showPanel(ctx, "home", "c1", m) {
		t.Fatal("showPanel reported failure for a panel that was posted")
	}
	rec, err := registry.Panels.Get("home")
	if err != nil || rec.MessageID != "m1" || rec.ChannelID != "c1" {
		t.Fatalf("panel record = %+v, %v; want message m1 in c1", rec, err)
	}
	if all, _ := bindings.List(); len(all) == 0 {
		t.Fatal("the posted panel's buttons were not bound")
	}
}
