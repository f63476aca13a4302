package daemon

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/state"
)

// openInotifies counts this process's open inotify instances.
func openInotifies(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && l == "anon_inode:inotify" {
			n++
		}
	}
	return n
}

// With no worktree to watch, watchWorktrees holds no inotify instance:
// fsnotify reads each in a goroutine with a 128 KiB stack, idle memory the
// daemon without worktrees has no use for (BenchmarkDaemonIdleRSS). The
// first worktree opens one.
func TestWatchWorktreesOpensNoWatcherUntilAWorktree(t *testing.T) {
	dir := t.TempDir()
	registry, err := state.OpenRegistry(filepath.Join(dir, "durable"))
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{registry: registry, log: slog.New(slog.DiscardHandler)}
	before := openInotifies(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.watchWorktrees(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	time.Sleep(200 * time.Millisecond) // its first scan
	if n := openInotifies(t) - before; n != 0 {
		t.Fatalf("watchWorktrees with no worktree holds %d inotify instances, want 0", n)
	}
	tree := filepath.Join(dir, "trees", "t1")
	if err := os.MkdirAll(tree, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := registry.Sessions.Update(ctx, "s1", func(g *state.Registered) error { g.Worktree = tree; return nil }); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * worktreeCheck)
	for openInotifies(t)-before != 1 {
		if time.Now().After(deadline) {
			t.Fatal("a worktree's parent was never watched")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
