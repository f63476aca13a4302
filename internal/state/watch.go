package state

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// pollInterval is how often Watch rescans when fsnotify is unavailable
// (inotify limits reached, or a filesystem without events).
const pollInterval = 250 * time.Millisecond

// Watch reports the keys of records that were created, changed or deleted,
// until ctx ends. Events are hints: re-read the record with Get. The
// directory is watched, not the files, because an atomic rename replaces a
// file's inode and would orphan a per-file watch. Keys come in the order
// of their changes; a key changed again before it was read is reported
// once.
func (c *collection) Watch(ctx context.Context) (<-chan string, error) {
	out := make(chan string, 64)
	s, err := watchers.subscribe(c.dir)
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
		defer watchers.unsubscribe(s)
		for {
			select {
			case <-ctx.Done():
				return
			case <-s.wake:
			}
			names, lost := s.take()
			for _, name := range names {
				key, ok := keyOf(name)
				if !ok {
					continue
				}
				select {
				case out <- key:
				case <-ctx.Done():
					return
				}
			}
			if lost {
				// An overflow loses events: fall back to polling, which
				// reports every record as changed once and then diffs.
				watchers.unsubscribe(s)
				c.poll(ctx, out, nil)
				return
			}
		}
	}()
	return out, nil
}

// DirWatch reports changes to the entries of a directory, as Watch does
// for a collection's records, on the same inotify instance.
type DirWatch struct{ s *watchSub }

// WatchDir watches the entries of dir until Close.
func WatchDir(dir string) (*DirWatch, error) {
	s, err := watchers.subscribe(filepath.Clean(dir))
	if err != nil {
		return nil, err
	}
	return &DirWatch{s}, nil
}

// Changed receives when Take has something to return.
func (w *DirWatch) Changed() <-chan struct{} { return w.s.wake }

// Take returns the names of the entries created, changed, renamed or
// removed since the last Take, each once, in the order of their changes;
// lost says events were lost (an inotify overflow), so any entry may have
// changed.
func (w *DirWatch) Take() (names []string, lost bool) { return w.s.take() }

// Close ends the watch.
func (w *DirWatch) Close() { watchers.unsubscribe(w.s) }

// watchers is the one inotify instance every Watch and DirWatch of the
// process shares, opened by the first and closed after the last: fsnotify
// reads each instance in a goroutine with a 64 KiB buffer on its stack (a
// 128 KiB stack), and the daemon watches nine collections and its config.
var watchers watchHub

type watchHub struct {
	mu   sync.Mutex
	w    *fsnotify.Watcher
	subs map[string][]*watchSub // by directory
	n    int                    // subscriptions, all directories
}

// watchSub is one watch's queue. The hub never blocks on it: the names of
// changed entries wait in it, each once, until the watch takes them.
type watchSub struct {
	dir    string
	wake   chan struct{} // cap 1: something is queued
	mu     sync.Mutex
	queue  []string
	queued map[string]bool
	lost   bool // events were lost (inotify overflow)
	gone   bool // unsubscribed
}

func (s *watchSub) push(name string, lost bool) {
	s.mu.Lock()
	if lost {
		s.lost = true
	} else if !s.queued[name] {
		s.queued[name] = true
		s.queue = append(s.queue, name)
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *watchSub) take() ([]string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q, lost := s.queue, s.lost
	s.queue, s.lost = nil, false
	clear(s.queued)
	return q, lost
}

func (h *watchHub) subscribe(dir string) (*watchSub, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.w == nil {
		w, err := fsnotify.NewWatcher()
		if err != nil {
			return nil, err
		}
		h.w, h.subs = w, map[string][]*watchSub{}
		go h.run(w)
	}
	// Added again even when watched: a directory removed and made again
	// is a new inode, which the old watch does not see.
	if err := h.w.Add(dir); err != nil {
		h.closeIfIdle()
		return nil, err
	}
	s := &watchSub{dir: dir, wake: make(chan struct{}, 1), queued: map[string]bool{}}
	h.subs[dir] = append(h.subs[dir], s)
	h.n++
	return s, nil
}

// unsubscribe ends s; a second call is a no-op.
func (h *watchHub) unsubscribe(s *watchSub) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s.gone {
		return
	}
	s.gone = true
	h.n--
	h.subs[s.dir] = slices.DeleteFunc(h.subs[s.dir], func(o *watchSub) bool { return o == s })
	if len(h.subs[s.dir]) == 0 {
		delete(h.subs, s.dir)
		if h.w != nil {
			_ = h.w.Remove(s.dir)
		}
	}
	h.closeIfIdle()
}

func (h *watchHub) closeIfIdle() {
	if h.n == 0 && h.w != nil {
		_ = h.w.Close()
		h.w, h.subs = nil, nil
	}
}

// run hands w's events to the subscriptions of their directory until w is
// closed. After an overflow every subscription is told that events were
// lost.
func (h *watchHub) run(w *fsnotify.Watcher) {
	for {
		select {
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if ev.Op == fsnotify.Chmod {
				continue
			}
			h.mu.Lock()
			if h.w == w {
				for _, s := range h.subs[filepath.Dir(ev.Name)] {
					s.push(filepath.Base(ev.Name), false)
				}
			}
			h.mu.Unlock()
		case _, ok := <-w.Errors:
			if !ok {
				return
			}
			h.mu.Lock()
			if h.w == w {
				for _, subs := range h.subs {
					for _, s := range subs {
						s.push("", true)
					}
				}
			}
			h.mu.Unlock()
		}
	}
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
