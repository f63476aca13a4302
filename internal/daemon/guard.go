package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/ccbridge/ccbridge/internal/state"
)

// Guarding the runtime directory: everything in it is trusted (the hook
// settings every new session runs, attachment paths in queued replies), so
// it is re-checked often, and refreshed now and then for age-based cleaners.
const (
	verifyEvery = time.Second
	touchEvery  = time.Hour
)

// guardRuntime runs until ctx ends. When the runtime directory is no
// longer the private one the daemon opened (removed, replaced, chmod-ed),
// it logs why and stops the daemon through stop, with an error wrapping
// state.ErrUnsafeDir: going on would hand the next session an impostor's
// hook settings. Every record access checks the same on its own; this
// makes the daemon notice even when idle.
func guardRuntime(ctx context.Context, d *state.Dir, log *slog.Logger, stop context.CancelCauseFunc, every, touch time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	lastTouch := time.Now()
	for {
		if err := d.Verify(); err != nil {
			log.Error("the runtime directory is no longer ours; stopping so nothing in it is trusted", "runtime", d.Root(), "err", err)
			stop(fmt.Errorf("runtime directory %s: %w", d.Root(), err))
			return
		}
		if time.Since(lastTouch) >= touch {
			if err := d.Touch(); err != nil {
				log.Warn("could not refresh the runtime directory's files", "err", err)
			}
			lastTouch = time.Now()
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
