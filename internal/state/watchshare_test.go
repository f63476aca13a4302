package state

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// inotifies counts this process's open inotify instances.
func inotifies(t *testing.T) int {
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

// Every Watch of the process shares one inotify instance, and so one
// reader goroutine: fsnotify's keeps a 64 KiB buffer on its stack (a
// 128 KiB stack), and the daemon watches nine collections (1.1 MiB of its
// idle RSS, BENCHMARKS.md). When the last watch ends the instance is
// closed.
func TestWatchesShareOneInotify(t *testing.T) {
	d, err := Open(filepath.Join(t.TempDir(), "rt"))
	if err != nil {
		t.Fatal(err)
	}
	before := inotifies(t)
	ctx, cancel := context.WithCancel(context.Background())
	var colls []*Collection[counter]
	var chans []<-chan string
	for i := range 4 {
		c, err := newCollection[counter](d, fmt.Sprintf("c%d", i), 1)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 { // a collection watched twice, as the daemon does Sessions
			ch, err := c.Watch(ctx)
			if err != nil {
				t.Fatal(err)
			}
			colls, chans = append(colls, c), append(chans, ch)
		}
	}
	if n := inotifies(t) - before; n != 1 {
		t.Fatalf("8 watches of 4 collections opened %d inotify instances, want 1", n)
	}
	for i, c := range colls {
		key := fmt.Sprintf("k%d", i)
		if _, err := c.Update(ctx, key, func(v *counter) error { v.N = i; return nil }); err != nil {
			t.Fatal(err)
		}
		waitKey(t, chans[i], key)
		if i%2 == 0 { // the other watch of the same collection sees it too
			waitKey(t, chans[i+1], key)
		}
	}
	cancel()
	for _, ch := range chans {
		for range ch { // closed once the watch has ended
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for inotifies(t) != before {
		if time.Now().After(deadline) {
			t.Fatalf("%d inotify instances left open after every watch ended", inotifies(t)-before)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A watch nobody reads does not hold up the others that share its inotify
// instance, and what it missed meanwhile is delivered once it is read.
func TestWatchNotReadDoesNotBlockOthers(t *testing.T) {
	d, err := Open(filepath.Join(t.TempDir(), "rt"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	slow, err := newCollection[counter](d, "slow", 1)
	if err != nil {
		t.Fatal(err)
	}
	fast, err := newCollection[counter](d, "fast", 1)
	if err != nil {
		t.Fatal(err)
	}
	slowCh, err := slow.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fastCh, err := fast.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const n = 300 // far past any channel's buffer
	for i := range n {
		if _, err := slow.Update(ctx, fmt.Sprintf("s%03d", i), func(v *counter) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := fast.Update(ctx, "f", func(v *counter) error { return nil }); err != nil {
		t.Fatal(err)
	}
	waitKey(t, fastCh, "f")
	seen := map[string]bool{}
	deadline := time.After(10 * time.Second)
	for len(seen) < n {
		select {
		case k := <-slowCh:
			seen[k] = true
		case <-deadline:
			t.Fatalf("the unread watch delivered %d of %d keys", len(seen), n)
		}
	}
}

// A watch made after the directory was removed and made again sees the new
// directory, though an older watch of the old one is still open.
func TestWatchOfARecreatedDirectory(t *testing.T) {
	c := testCollection(t, filepath.Join(t.TempDir(), "rt"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := c.Watch(ctx); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(c.dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(c.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	ch, err := c.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Update(ctx, "after", func(v *counter) error { v.N = 1; return nil }); err != nil {
		t.Fatal(err)
	}
	waitKey(t, ch, "after")
}
