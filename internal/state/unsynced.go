package state

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Writes on the path of a reply need not wait for the disk: a record is
// visible to every process once it is renamed into place, and only a power
// cut, after which no hook runs again for that turn, loses what was not
// synced. So the Stop hook writes its records unsynced, posts, then syncs
// them (each fsync pair is ~0.3 ms idle, several ms on a loaded machine).

// UpdateUnsynced is Update, its write durable only once Sync(key) returns.
func (c *Collection[T]) UpdateUnsynced(ctx context.Context, key string, fn func(*T) error) (T, error) {
	return c.updateSync(ctx, key, fn, false)
}

// CreateUnsynced is Create, the record durable only once Sync(key)
// returns. The claim itself holds at once: it is made under the lock.
func (c *Collection[T]) CreateUnsynced(ctx context.Context, key string, v T) (created bool, err error) {
	return c.create(ctx, key, v, false)
}

// Sync makes the record's last write durable (UpdateUnsynced,
// CreateUnsynced); a record deleted since is no error.
func (c *collection) Sync(key string) error {
	p, err := c.path(key)
	if err != nil {
		return err
	}
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sync %s: %w", key, err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", key, err)
	}
	syncDir(filepath.Dir(p))
	return nil
}
