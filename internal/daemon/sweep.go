package daemon

import (
	"context"
	"errors"
	"path/filepath"
	"syscall"
	"time"

	"github.com/ccbridge/ccbridge/internal/approval"
	"github.com/ccbridge/ccbridge/internal/state"
)

// Sweeping: a hook killed with SIGKILL cannot close its card, and resolved
// records are kept only long enough to answer late clicks.
const (
	sweepEvery     = 3 * time.Second
	deadlineGrace  = time.Minute
	keepResolved   = 15 * time.Minute
	keepSeenBlocks = 6 * time.Hour
)

// Bounds on what grows with use (pruneGrowth runs every pruneEvery).
const (
	pruneEvery   = 10 * time.Minute
	keepTurns    = 7 * 24 * time.Hour
	maxTurns     = 5000
	hookLogMax   = 5 << 20 // bytes; one rotated copy is kept
	keepFiles    = 7 * 24 * time.Hour
	maxFileBytes = 256 << 20 // uploads and outputs together (/run/user is a small tmpfs)
)

// sweepRequests closes pending requests whose hook is gone or whose
// deadline long passed, and prunes old records.
func (r *relay) sweepRequests(ctx context.Context) {
	tick := time.NewTicker(sweepEvery)
	defer tick.Stop()
	var pruned time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now := time.Now()
		r.sweepOnce(ctx, now)
		if now.Sub(pruned) >= pruneEvery {
			r.pruneGrowth(ctx, now)
			pruned = now
		}
	}
}

// pruneGrowth bounds the runtime dir: turn records (one per reply) by age
// and count, hook.log by size, uploads and outputs by age and total size.
// Files a queued reply still has to attach are kept.
func (r *relay) pruneGrowth(ctx context.Context, now time.Time) {
	if n, err := r.store.Turns.Prune(ctx, now.Add(-keepTurns), maxTurns); err != nil || n > 0 {
		r.log.Info("pruned old turn records", "removed", n, "err", err)
	}
	// Hand-started Claudes (state.Live): rewritten on each prompt, so a
	// month without one is a Claude long gone.
	if n, err := r.store.Live.Prune(ctx, now.Add(-30*24*time.Hour), 1000); err != nil || n > 0 {
		r.log.Info("pruned old records of hand-started sessions", "removed", n, "err", err)
	}
	if rotated, err := r.store.Dir.RotateLog("hook.log", hookLogMax); err != nil || rotated {
		r.log.Info("rotated hook.log", "rotated", rotated, "err", err)
	}
	queued := map[string]bool{}
	outbox, _ := r.store.Outbox.List()
	for _, o := range outbox {
		for _, f := range o.Files {
			queued[filepath.Clean(f)] = true
		}
	}
	keep := func(p string) bool { return queued[filepath.Clean(p)] }
	if n, err := r.store.Dir.PruneSessionFiles(now.Add(-keepFiles), maxFileBytes, keep); err != nil || n > 0 {
		r.log.Info("pruned old uploads and outputs", "removed", n, "err", err)
	}
}

func (r *relay) sweepOnce(ctx context.Context, now time.Time) {
	all, _ := r.store.Requests.List()
	for id, req := range all {
		switch {
		case req.Status == state.RequestPending && req.Keys == "" && !processAlive(req.HookPID):
			// A request answered by keys has no hook waiting (keys.go).
			r.closeRequest(ctx, id, state.RequestInterrupted)
		case req.Status == state.RequestPending && now.After(req.Deadline.Add(deadlineGrace)):
			r.closeRequest(ctx, id, state.RequestExpired)
		case req.Status != state.RequestPending && now.Sub(req.Created) > keepResolved:
			_ = r.store.Requests.Delete(ctx, id)
		}
	}
	seen, _ := r.store.Seen.List()
	for k, s := range seen {
		if now.Sub(s.At) > keepSeenBlocks {
			_ = r.store.Seen.Delete(ctx, k)
		}
	}
}

func (r *relay) closeRequest(ctx context.Context, id, status string) {
	req, err := r.store.Requests.Update(ctx, id, func(q *state.Request) error {
		if q.Status != state.RequestPending {
			return errors.New("not pending")
		}
		q.Status = status
		return nil
	})
	if err != nil {
		return
	}
	r.log.Info("closed a prompt whose hook is gone", "request", id, "status", status)
	p, ok := r.posters[req.Server]
	if !ok || req.MessageID == "" {
		return
	}
	ectx, cancel := context.WithTimeout(ctx, noticeTimeout)
	defer cancel()
	if err := p.EditCard(ectx, req.ChannelID, req.MessageID, approval.Render(id, req), approval.StatusLine(req)); err != nil {
		r.log.Error("could not update a card", "request", id, "err", err)
	}
}

// processAlive reports whether a process exists (signal 0 probes it).
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
