package state

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"
)

// paneLockRetry is how often a waiting typist tries a pane lock again: a
// holder keeps it for a paste, an Enter and a receipt, about a second.
const paneLockRetry = 10 * time.Millisecond

// LockPane makes one process at a time type into a session's pane: the
// daemon, `ccbridge mcp` and any other front end each drive sessions with
// their own session manager, and keys from two of them interleaved in one
// input box (one's C-u wiping the other's paste). The lock files (one per
// session key) are never removed: see Collection on why.
func (d *Dir) LockPane(ctx context.Context, key string) (unlock func(), err error) {
	if !validKey(key) {
		return nil, fmt.Errorf("%w: %q", ErrBadKey, key)
	}
	dir, err := d.subdir("locks")
	if err != nil {
		return nil, err
	}
	l := flock.New(filepath.Join(dir, "pane-"+key), flock.SetFlag(os.O_CREATE|os.O_RDWR), flock.SetPermissions(0o600))
	ok, err := l.TryLockContext(ctx, paneLockRetry)
	if err != nil || !ok {
		return nil, fmt.Errorf("lock the pane of %s: %w", key, errors.Join(err, ctx.Err()))
	}
	return func() { _ = l.Close() }, nil
}
