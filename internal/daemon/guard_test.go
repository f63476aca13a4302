package daemon

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/testutil/testenv"
)

// The runtime dir is replaced under a running daemon: the guard stops it,
// with an error naming the dir, and says so in the log.
func TestGuardStopsWhenTheRuntimeDirIsReplaced(t *testing.T) {
	root := filepath.Join(t.TempDir(), "rt")
	store, err := state.OpenStore(root)
	if err != nil {
		t.Fatal(err)
	}
	var logs testenv.SyncBuffer
	ctx, stop := context.WithCancelCause(context.Background())
	defer stop(nil)
	done := make(chan struct{})
	go func() {
		guardRuntime(ctx, store.Dir, slog.New(slog.NewTextHandler(&logs, nil)), stop, 10*time.Millisecond, time.Hour)
		close(done)
	}()
	select {
	case <-ctx.Done():
		t.Fatalf("stopped while the dir was fine: %v", context.Cause(ctx))
	case <-time.After(50 * time.Millisecond):
	}
	os.RemoveAll(root)
	if _, err := state.Open(root); err != nil { // the impostor, 0700 like ours
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the guard did not stop after the runtime dir was replaced")
	}
	if err := context.Cause(ctx); !errors.Is(err, state.ErrUnsafeDir) || !strings.Contains(err.Error(), root) {
		t.Fatalf("cause = %v, want ErrUnsafeDir naming %s", err, root)
	}
	if !strings.Contains(logs.String(), "no longer ours") {
		t.Fatalf("no log line:\n%s", logs.String())
	}
}

// The guard refreshes what must live, so an age-based tmp cleaner keeps it.
func TestGuardTouchesTheRuntimeDir(t *testing.T) {
	root := filepath.Join(t.TempDir(), "rt")
	store, err := state.OpenStore(root)
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancelCause(context.Background())
	defer stop(nil)
	store.Bots.Update(ctx, "home", func(b *state.Bot) error { b.Instance = "i"; return nil })
	bot := filepath.Join(root, "bots", "home.json")
	old := time.Now().Add(-20 * 24 * time.Hour)
	os.Chtimes(bot, old, old)
	go guardRuntime(ctx, store.Dir, slog.New(slog.DiscardHandler), stop, 10*time.Millisecond, 20*time.Millisecond)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if fi, err := os.Stat(bot); err == nil && time.Since(fi.ModTime()) < time.Hour {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the guard never refreshed bots/home.json")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
