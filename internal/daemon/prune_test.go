package daemon

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/state"
)

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func age(t *testing.T, p string, d time.Duration) {
	t.Helper()
	old := time.Now().Add(-d)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
}

// The sweep bounds what grows: old turns go, a big hook.log is rotated
// (one old copy kept), old uploads and outputs go unless a queued reply
// still attaches them.
func TestPruneGrowth(t *testing.T) {
	root := filepath.Join(t.TempDir(), "rt")
	store, err := state.OpenStore(root)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	week := 7 * 24 * time.Hour
	store.Turns.Create(ctx, "old", state.Turn{Reply: "x"})
	store.Turns.Create(ctx, "new", state.Turn{Reply: "y"})
	age(t, filepath.Join(root, "turns", "old.json"), week+time.Hour)

	logf, _ := store.Dir.OpenLog("hook.log")
	logf.Truncate(hookLogMax + 1)
	logf.Close()

	up, _ := store.Dir.Uploads("s1")
	out, _ := store.Dir.Outputs("s1")
	gone, _ := store.Dir.Uploads("s2")
	for _, f := range []string{filepath.Join(up, "old.png"), filepath.Join(up, "new.png"), filepath.Join(out, "queued.txt"), filepath.Join(out, "old.txt")} {
		os.WriteFile(f, []byte("data"), 0o600)
	}
	for _, f := range []string{filepath.Join(up, "old.png"), filepath.Join(out, "queued.txt"), filepath.Join(out, "old.txt"), gone} {
		age(t, f, week+time.Hour)
	}
	store.Outbox.Create(ctx, store.OutboxKey(), state.Outbound{ChannelID: "c", Files: []string{filepath.Join(out, "queued.txt")}})

	r := &relay{store: store, posters: map[string]chat.Poster{}, log: slog.New(slog.DiscardHandler)}
	r.pruneGrowth(ctx, time.Now())

	if _, err := store.Turns.Get("old"); err == nil {
		t.Error("a turn older than a week was kept")
	}
	if _, err := store.Turns.Get("new"); err != nil {
		t.Errorf("a fresh turn was pruned: %v", err)
	}
	logs := filepath.Join(root, "logs")
	if fi, err := os.Stat(filepath.Join(logs, "hook.log.1")); err != nil || fi.Size() != hookLogMax+1 || exists(filepath.Join(logs, "hook.log")) {
		t.Errorf("hook.log not rotated: %v", err)
	}
	for f, want := range map[string]bool{filepath.Join(up, "old.png"): false, filepath.Join(up, "new.png"): true,
		filepath.Join(out, "queued.txt"): true, filepath.Join(out, "old.txt"): false, gone: false} {
		if exists(f) != want {
			t.Errorf("%s: exists = %v, want %v", f, !want, want)
		}
	}
}
