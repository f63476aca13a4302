package daemon

import (
	"context"
	"log/slog"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/state"
)

func TestSweepClosesRequestsOfDeadHooks(t *testing.T) {
	store, err := state.OpenStore(filepath.Join(t.TempDir(), "rt"))
	if err != nil {
		t.Fatal(err)
	}
	dead := exec.Command("true")
	dead.Run()
	ctx := context.Background()
	now := time.Now()
	store.Requests.Create(ctx, "gone", state.Request{Status: state.RequestPending, HookPID: dead.Process.Pid, Created: now, Deadline: now.Add(time.Hour)})
	store.Requests.Create(ctx, "live", state.Request{Status: state.RequestPending, HookPID: 1, Created: now, Deadline: now.Add(time.Hour)})
	store.Requests.Create(ctx, "late", state.Request{Status: state.RequestPending, HookPID: 1, Created: now.Add(-2 * time.Hour), Deadline: now.Add(-time.Hour)})
	store.Requests.Create(ctx, "old", state.Request{Status: state.RequestDecided, Created: now.Add(-time.Hour)})
	// Codex's card: answered by keys, no hook waits on it; it expires.
	store.Requests.Create(ctx, "keyed", state.Request{Status: state.RequestPending, Keys: "codex", Created: now, Deadline: now.Add(time.Hour)})
	store.Requests.Create(ctx, "keyedLate", state.Request{Status: state.RequestPending, Keys: "codex", Created: now.Add(-2 * time.Hour), Deadline: now.Add(-time.Hour)})
	r := &relay{store: store, posters: map[string]chat.Poster{}, log: slog.New(slog.DiscardHandler)}
	r.sweepOnce(ctx, now)
	for key, want := range map[string]string{"gone": state.RequestInterrupted, "live": state.RequestPending, "late": state.RequestExpired,
		"keyed": state.RequestPending, "keyedLate": state.RequestExpired} {
		if got, _ := store.Requests.Get(key); got.Status != want {
			t.Errorf("%s: status %s, want %s", key, got.Status, want)
		}
	}
	if _, err := store.Requests.Get("old"); err == nil {
		t.Error("an old resolved request was kept")
	}
}

func TestOutboxKeepsMessagesOfAnUnconfiguredServer(t *testing.T) {
	store, err := state.OpenStore(filepath.Join(t.TempDir(), "rt"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	store.Outbox.Create(ctx, store.OutboxKey(), state.Outbound{Server: "gone", ChannelID: "100000000000000001", Content: "a reply"})
	r := &relay{store: store, posters: map[string]chat.Poster{}, log: slog.New(slog.DiscardHandler), unknownLogged: map[string]bool{}}
	r.drainOnce(ctx)
	r.drainOnce(ctx)
	if keys, _ := store.Outbox.Keys(); len(keys) != 1 {
		t.Fatalf("outbox = %v; the reply was dropped", keys)
	}
}
