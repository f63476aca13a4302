package state

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/gofrs/flock"
)

// ErrNotFound is returned by Get for a record that does not exist.
var ErrNotFound = errors.New("record not found")

// ErrBadKey is returned for a key that is not a plain file name.
var ErrBadKey = errors.New("invalid record key")

// validKey keeps keys plain file names: letters, digits and _ . @ -, not
// starting with a dot or dash, no "..", at most 160 bytes, so a key from a
// hook payload can never escape the directory. (A loop, not a regexp: the
// hooks start on every tool call and compiling {0,159} cost 0.4 ms.)
func validKey(key string) bool {
	if len(key) == 0 || len(key) > 160 || strings.Contains(key, "..") {
		return false
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || (c != '_' && c != '.' && c != '@' && c != '-')) {
			return false
		}
	}
	return true
}

// lockTimeout bounds how long Update and Delete wait for the lock when the
// context has no deadline. Critical sections are a read, a callback and a
// write, so a longer wait means a stuck holder.
const lockTimeout = 5 * time.Second

// lockRetry is how often a blocked locker retries.
const lockRetry = 2 * time.Millisecond

// envelope is the on-disk format of every record.
type envelope struct {
	Version   int             `json:"version"`
	UpdatedAt time.Time       `json:"updated_at"`
	Data      json.RawMessage `json:"data"`
}

// Collection is a directory of records of one type.
//
// All writers of a collection share one lock file (.lock) rather than a
// sidecar per record: a lock file can never be removed safely (a waiter
// would lock a deleted inode), so per-record sidecars would pile up in /tmp
// for every prompt ever asked. Critical sections are microseconds long, so
// one lock per collection costs nothing measurable.
//
// Its methods are thin typed wrappers over collection, which does the work
// on untyped records: Go compiles a generic method once per record type, and
// with some thirty record types the typed core was 0.85 MiB of code, nearly
// all of it paged in by every daemon (BENCHMARKS.md, the idle RSS).
type Collection[T any] struct{ collection }

// collection is Collection without its record type: a record is handled as
// a pointer to a new T (newRec) behind an any.
type collection struct {
	d       *Dir
	dir     string
	version int
	newRec  func() any
}

func newCollection[T any](d *Dir, name string, version int) (*Collection[T], error) {
	p, err := d.subdir(name)
	if err != nil {
		return nil, err
	}
	return &Collection[T]{collection{d: d, dir: p, version: version, newRec: func() any { return new(T) }}}, nil
}

func (c *collection) path(key string) (string, error) {
	if !validKey(key) {
		return "", fmt.Errorf("%w: %q", ErrBadKey, key)
	}
	if err := c.d.Verify(); err != nil {
		return "", err
	}
	return filepath.Join(c.dir, key+".json"), nil
}

// Get reads one record without locking: writes are atomic renames.
func (c *Collection[T]) Get(key string) (T, error) {
	var v T
	if err := c.get(key, &v); err != nil {
		var zero T
		return zero, err
	}
	return v, nil
}

func (c *collection) get(key string, v any) error {
	p, err := c.path(key)
	if err != nil {
		return err
	}
	_, err = c.read(p, v)
	if errors.Is(err, errCorrupt) {
		c.quarantine(context.Background(), p, false, err)
		return ErrNotFound
	}
	return err
}

// errCorrupt marks a record that exists but cannot be read as this
// version's T: garbage, or another version.
var errCorrupt = errors.New("unreadable record")

// quarantine renames an unreadable record aside to <name>.corrupt-<time>
// and logs it, so one bad file never blocks its key (or a List) for good.
// The file is kept for a person to look at; it is never read again. The
// rename happens under the collection's lock (locked is true when the
// caller holds it), after a re-read, so a record rewritten meanwhile is
// never moved away.
func (c *collection) quarantine(ctx context.Context, p string, locked bool, cause error) {
	if !locked {
		unlock, err := c.lock(ctx)
		if err != nil {
			c.d.logger().Warn("unreadable record left in place: cannot lock", "record", p, "err", cause, "lock_err", err)
			return
		}
		defer unlock()
		if _, err := c.read(p, c.newRec()); !errors.Is(err, errCorrupt) {
			return
		}
	}
	aside := p + ".corrupt-" + time.Now().UTC().Format("20060102T150405.000000000Z")
	if err := os.Rename(p, aside); err != nil {
		c.d.logger().Error("unreadable record could not be moved aside", "record", p, "err", cause, "rename_err", err)
		return
	}
	c.d.logger().Warn("unreadable record moved aside; its key starts afresh", "record", p, "moved_to", aside, "err", cause)
}

// read decodes the record at p into v, a pointer to a record; after an
// error v may hold part of it.
func (c *collection) read(p string, v any) (time.Time, error) {
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return time.Time{}, ErrNotFound
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("read %s: %w", filepath.Base(p), err)
	}
	var env envelope
	if err := json.Unmarshal(b, &env); err != nil {
		return time.Time{}, fmt.Errorf("decode %s: %w: %w", filepath.Base(p), errCorrupt, err)
	}
	if env.Version != c.version {
		// Never read it as an empty record: the caller quarantines it,
		// which keeps the file and says so in the log.
		return time.Time{}, fmt.Errorf("decode %s: %w: record version %d, this ccbridge reads version %d", filepath.Base(p), errCorrupt, env.Version, c.version)
	}
	if err := json.Unmarshal(env.Data, v); err != nil {
		return time.Time{}, fmt.Errorf("decode %s: %w: %w", filepath.Base(p), errCorrupt, err)
	}
	return env.UpdatedAt, nil
}

// Update reads the record (the zero value if it does not exist), applies fn,
// and writes the result, all under the collection's lock, so concurrent
// updates from any number of processes are never lost. If fn returns an
// error nothing is written and the error is returned.
func (c *Collection[T]) Update(ctx context.Context, key string, fn func(*T) error) (T, error) {
	return c.updateSync(ctx, key, fn, true)
}

// updateSync is Update; without sync the write is not waited for on disk
// (see UpdateUnsynced).
func (c *Collection[T]) updateSync(ctx context.Context, key string, fn func(*T) error, sync bool) (T, error) {
	v, err := c.update(ctx, key, func(v any, _ bool) (any, error) { return v, fn(v.(*T)) }, sync)
	if err != nil {
		var zero T
		return zero, err
	}
	return *v.(*T), nil
}

// update reads the record into a new record (c.newRec), passes it to fn and
// writes what fn returns, all under the lock, and returns what it wrote.
func (c *collection) update(ctx context.Context, key string, fn func(cur any, exists bool) (any, error), sync bool) (any, error) {
	p, err := c.path(key)
	if err != nil {
		return nil, err
	}
	unlock, err := c.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	v := c.newRec()
	_, err = c.read(p, v)
	if errors.Is(err, errCorrupt) {
		c.quarantine(ctx, p, true, err)
		v, err = c.newRec(), ErrNotFound // the failed decode may have left part of a record
	}
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	v, err = fn(v, err == nil)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", key, err)
	}
	b, err := json.Marshal(envelope{Version: c.version, UpdatedAt: time.Now().UTC(), Data: data})
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", key, err)
	}
	if err := writeAtomicSync(p, b, 0o600, sync); err != nil {
		return nil, err
	}
	return v, nil
}

// Create writes the record only if it does not exist yet and reports
// whether it did. It is how "exactly once" claims are made (a reply posted
// once per turn, a click deciding once).
func (c *Collection[T]) Create(ctx context.Context, key string, v T) (created bool, err error) {
	return c.create(ctx, key, v, true)
}

// create is Create for v, a record (not a pointer to one).
func (c *collection) create(ctx context.Context, key string, v any, sync bool) (bool, error) {
	_, err := c.update(ctx, key, func(_ any, exists bool) (any, error) {
		if exists {
			return nil, errExists
		}
		return v, nil
	}, sync)
	if errors.Is(err, errExists) {
		return false, nil
	}
	return err == nil, err
}

var errExists = errors.New("exists")

// Delete removes a record; deleting a missing record is not an error.
func (c *collection) Delete(ctx context.Context, key string) error {
	p, err := c.path(key)
	if err != nil {
		return err
	}
	unlock, err := c.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	return nil
}

// List returns every record by key. A record that cannot be decoded is
// quarantined (see quarantine) and left out; other read errors are
// reported in the error but do not hide the others.
func (c *Collection[T]) List() (map[string]T, error) {
	var out map[string]T
	err := c.list(func(n int) { out = make(map[string]T, n) }, func(key string, v any) { out[key] = *v.(*T) })
	return out, err
}

// list calls each with every readable record (a pointer to it), after
// size with the number of directory entries; see List.
func (c *collection) list(size func(n int), each func(key string, v any)) error {
	if err := c.d.Verify(); err != nil {
		return err
	}
	ents, err := os.ReadDir(c.dir)
	if err != nil {
		return fmt.Errorf("list %s: %w", filepath.Base(c.dir), err)
	}
	size(len(ents))
	var errs []error
	for _, e := range ents {
		key, ok := keyOf(e.Name())
		if !ok {
			continue
		}
		v := c.newRec()
		_, err := c.read(filepath.Join(c.dir, e.Name()), v)
		if errors.Is(err, ErrNotFound) {
			continue // deleted since ReadDir
		}
		if errors.Is(err, errCorrupt) {
			c.quarantine(context.Background(), filepath.Join(c.dir, e.Name()), false, err)
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		each(key, v)
	}
	return errors.Join(errs...)
}

// Keys returns the sorted keys of the collection.
func (c *collection) Keys() ([]string, error) {
	keys := []string{}
	err := c.list(func(n int) { keys = make([]string, 0, n) }, func(key string, _ any) { keys = append(keys, key) })
	sort.Strings(keys)
	return keys, err
}

// keyOf maps a file name in the collection directory to its record key.
func keyOf(name string) (string, bool) {
	if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") {
		return "", false
	}
	return strings.TrimSuffix(name, ".json"), true
}

func (c *collection) lock(ctx context.Context) (func(), error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, lockTimeout)
		defer cancel()
	}
	l := flock.New(filepath.Join(c.dir, ".lock"), flock.SetFlag(os.O_CREATE|os.O_RDWR), flock.SetPermissions(0o600))
	ok, err := l.TryLockContext(ctx, lockRetry)
	if err != nil || !ok {
		return nil, fmt.Errorf("lock %s: %w", filepath.Base(c.dir), errors.Join(err, ctx.Err()))
	}
	return func() { _ = l.Close() }, nil
}

// WriteAtomic writes b to path with the given mode via a temp file in the
// same directory, fsync and rename, so a reader sees the old or the new
// file, never a torn one. It is also how ccbridge edits files outside the
// runtime directory (install-hooks edits ~/.claude/settings.json with it).
// When path is a symlink (dotfiles kept in a repo), the file it points to
// is replaced and the link kept.
func WriteAtomic(path string, b []byte, perm os.FileMode) error {
	target, err := resolveLinks(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return writeAtomicMode(target, b, perm)
}

// resolveLinks follows path while it is a symlink and returns the path of
// what it finally names, which need not exist yet.
func resolveLinks(path string) (string, error) {
	for range 40 {
		fi, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return path, nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return path, nil
		}
		link, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(path), link)
		}
		path = link
	}
	return "", fmt.Errorf("too many levels of symbolic links at %s", path)
}

func writeAtomic(p string, b []byte) error { return writeAtomicMode(p, b, 0o600) }

func writeAtomicMode(p string, b []byte, perm os.FileMode) error {
	return writeAtomicSync(p, b, perm, true)
}

// writeAtomicSync replaces p with b; with sync, durably.
func writeAtomicSync(p string, b []byte, perm os.FileMode, sync bool) (err error) {
	f, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(p), err)
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	if err = f.Chmod(perm); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(p), err)
	}
	if _, err = f.Write(b); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(p), err)
	}
	if sync {
		if err = f.Sync(); err != nil {
			return fmt.Errorf("write %s: %w", filepath.Base(p), err)
		}
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(p), err)
	}
	if err = os.Rename(f.Name(), p); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(p), err)
	}
	if sync {
		syncDir(filepath.Dir(p))
	}
	return nil
}

// syncDir makes the renames in dir durable (the durable registry must
// survive a power cut). Best effort: some filesystems refuse fsync on a
// directory.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}
