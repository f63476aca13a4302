package state

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// pollInterval is how often Watch rescans when fsnotify is unavailable
// (inotify limits reached, or a filesystem without events).
const pollInterval = 250 * time.Millisecond

// Watch reports the keys of records that were created, changed or deleted,
// until ctx ends. Events are hints: re-read the record with Get. The
// directory is watched, not the files, because an atomic rename replaces a
// file's inode and would orphan a per-file watch.
func (c *collection) Watch(ctx context.Context) (<-chan string, error) {
	w, err := fsnotify.NewWatcher()
	if err == nil {
		if err = w.Add(c.dir); err != nil {
			_ = w.Close()
		}
	}
	out := make(chan string, 64)
	if err != nil {
		// The first snapshot is taken before Watch returns: a change made
		// right after it must be seen.
		prev := c.snapshot()
		go func() {
			defer close(out)
			c.poll(ctx, out, prev)
		}()
		return out, nil
	}
	go func() {
		defer close(out)
		defer w.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				key, ok := keyOf(filepath.Base(ev.Name))
				if !ok || ev.Op == fsnotify.Chmod {
					continue
				}
				select {
				case out <- key:
				case <-ctx.Done():
					return
				}
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
				// An overflow loses events: fall back to polling, which
				// reports every record as changed once and then diffs.
				_ = w.Close()
				c.poll(ctx, out, nil)
				return
			}
		}
	}()
	return out, nil
}

type fileStamp struct {
	mod  time.Time
	size int64
	ino  uint64
}

func (c *collection) snapshot() map[string]fileStamp {
	ents, _ := os.ReadDir(c.dir)
	m := make(map[string]fileStamp, len(ents))
	for _, e := range ents {
		key, ok := keyOf(e.Name())
		if !ok {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		m[key] = fileStamp{mod: fi.ModTime(), size: fi.Size(), ino: inode(fi)}
	}
	return m
}

// poll diffs directory snapshots, the first against prev (nil: every
// record is new), and sends changed keys until ctx ends.
func (c *collection) poll(ctx context.Context, out chan<- string, prev map[string]fileStamp) {
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cur := c.snapshot()
		var changed []string
		for k, s := range cur {
			if p, ok := prev[k]; !ok || p != s {
				changed = append(changed, k)
			}
		}
		for k := range prev {
			if _, ok := cur[k]; !ok {
				changed = append(changed, k)
			}
		}
		prev = cur
		for _, k := range changed {
			select {
			case out <- k:
			case <-ctx.Done():
				return
			}
		}
	}
}
