package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
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

// The config's watch shares the process's one inotify instance with the
// state's watches: fsnotify reads each instance in a goroutine with a
// 128 KiB stack (BenchmarkDaemonIdleRSS).
func TestReloaderSharesTheStateWatcher(t *testing.T) {
	store, err := state.OpenStore(filepath.Join(t.TempDir(), "rt"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := store.Sessions.Watch(ctx); err != nil {
		t.Fatal(err)
	}
	before := openInotifies(t)
	g := newReloadRig(t)
	if n := openInotifies(t) - before; n != 0 {
		t.Fatalf("the config's watch opened %d inotify instances of its own, want 0", n)
	}
	g.write(t, fmt.Sprintf(reloadTOML+webProject, "two", g.dir, g.dir))
	if said := g.waitSaid(t, 1); !strings.Contains(said, "config reloaded") {
		t.Fatalf("said %q after an edit", said)
	}
}
