package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/state"
)

// worktreeCheck rescans the worktrees when no change event came.
const worktreeCheck = 5 * time.Second

// watchWorktrees notices a thread's worktree removed from outside
// ccbridge: it stops the thread's session and says so in the thread. The
// worktrees' parent directories are watched; the rescan is the fallback.
// The watcher is opened with the first worktree: fsnotify reads it in a
// goroutine with a 128 KiB stack, which a daemon without worktrees need not
// keep.
func (r *relay) watchWorktrees(ctx context.Context) {
	var w *fsnotify.Watcher
	defer func() {
		if w != nil {
			w.Close()
		}
	}()
	var events <-chan fsnotify.Event
	opened := false
	watched := map[string]bool{}
	tick := time.NewTicker(worktreeCheck)
	defer tick.Stop()
	for {
		regs, _ := r.registry.Sessions.List()
		for key, g := range regs {
			if g.Worktree == "" || g.Archived {
				continue
			}
			if !opened {
				opened = true
				if nw, err := fsnotify.NewWatcher(); err == nil {
					w, events = nw, nw.Events
				}
			}
			if parent := filepath.Dir(g.Worktree); w != nil && !watched[parent] && w.Add(parent) == nil {
				watched[parent] = true
			}
			if _, err := os.Stat(g.Worktree); errors.Is(err, fs.ErrNotExist) {
				r.worktreeGone(ctx, key, g)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-events:
		}
	}
}

func (r *relay) worktreeGone(ctx context.Context, key string, g state.Registered) {
	r.log.Warn("a thread's worktree was removed outside ccbridge", "session", key, "path", g.Worktree)
	if err := r.sessions.Stop(ctx, key); err != nil {
		r.log.Error("could not stop the session of a removed worktree", "session", key, "err", err)
	}
	if _, err := r.registry.Sessions.Update(ctx, key, func(x *state.Registered) error {
		x.Worktree, x.Branch, x.BaseCommit, x.WorktreeKept, x.KeptNotice = "", "", "", false, ""
		return nil
	}); err != nil {
		r.log.Error("forget a removed worktree", "session", key, "err", err)
		return
	}
	p, ok := r.posters[g.Server]
	if !ok || g.ThreadID == "" {
		return
	}
	pctx, cancel := context.WithTimeout(ctx, noticeTimeout)
	defer cancel()
	text := fmt.Sprintf("⚠️ This thread's worktree `%s` (branch `%s`) was removed outside ccbridge, so its Claude session was stopped. A new message starts it again in a fresh worktree.", g.Worktree, g.Branch)
	if _, err := p.Post(pctx, g.ThreadID, chat.Message{Content: text}); err != nil {
		r.log.Error("could not report a removed worktree", "session", key, "err", err)
	}
}
