// Package state is the only code that knows the paths, formats and locking of
// ccbridge's runtime directory (/tmp/ccbridge-<uid>/ by default). The daemon
// and the hooks coordinate only through it. Records are one JSON file each,
// written under a flock with temp-file + fsync + rename, so lock-free readers
// never see a torn file. It imports no other internal package.
package state

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/gofrs/flock"
)

// EnvRuntimeDir overrides the runtime directory; the daemon passes it into
// every pane so hooks use the same one.
const EnvRuntimeDir = "CCBRIDGE_RUNTIME_DIR"

// DefaultRuntimeDir returns $CCBRIDGE_RUNTIME_DIR or /tmp/ccbridge-<uid>.
func DefaultRuntimeDir() string {
	if d := os.Getenv(EnvRuntimeDir); d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), "ccbridge-"+strconv.Itoa(os.Getuid()))
}

// Dir is an opened, checked runtime directory.
type Dir struct {
	root string
	log  atomic.Pointer[slog.Logger]
}

// SetLogger sets where the state package reports what it repaired (a
// quarantined record, say). The default is slog.Default().
func (d *Dir) SetLogger(l *slog.Logger) { d.log.Store(l) }

func (d *Dir) logger() *slog.Logger {
	if l := d.log.Load(); l != nil {
		return l
	}
	return slog.Default()
}

// ErrUnsafeDir is returned (wrapped) when the runtime directory could be
// read or written by someone else.
var ErrUnsafeDir = errors.New("unsafe runtime directory")

// Open creates the runtime directory with mode 0700 if needed and refuses one
// that is a symlink, is not a directory, is owned by another user, or is
// accessible to group or others. In a world-writable /tmp anyone can create
// the path first, so it is never trusted without these checks, and never
// chmod-ed into shape.
func Open(root string) (*Dir, error) {
	if !filepath.IsAbs(root) {
		return nil, fmt.Errorf("runtime directory %q must be an absolute path", root)
	}
	if err := os.MkdirAll(filepath.Dir(root), 0o700); err != nil {
		return nil, fmt.Errorf("create runtime directory parent: %w", err)
	}
	if err := os.Mkdir(root, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("create runtime directory: %w", err)
	}
	if err := checkPrivate(root); err != nil {
		return nil, err
	}
	return &Dir{root: root}, nil
}

func checkPrivate(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return fmt.Errorf("check runtime directory: %w", err)
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%w: %s is a symlink; remove it and start again", ErrUnsafeDir, path)
	case !fi.IsDir():
		return fmt.Errorf("%w: %s is not a directory", ErrUnsafeDir, path)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%w: %s is owned by uid %d, not by you (uid %d); remove it or set %s", ErrUnsafeDir, path, st.Uid, os.Getuid(), EnvRuntimeDir)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%w: %s has mode %o; it must be 0700 (chmod 700 %s)", ErrUnsafeDir, path, perm, path)
	}
	return nil
}

// Root is the directory's path.
func (d *Dir) Root() string { return d.root }

// subdir returns (creating it 0700) a directory under the root.
func (d *Dir) subdir(name string) (string, error) {
	p := filepath.Join(d.root, name)
	if err := os.Mkdir(p, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("create %s: %w", name, err)
	}
	return p, nil
}

// ErrDaemonRunning is returned by LockDaemon when another daemon holds the lock.
var ErrDaemonRunning = errors.New("another ccbridge daemon is running")

// LockDaemon takes the single-instance lock. The lock dies with the process,
// so there is no stale PID file to clean up.
func (d *Dir) LockDaemon() (unlock func() error, err error) {
	l := flock.New(filepath.Join(d.root, "daemon.lock"), flock.SetFlag(os.O_CREATE|os.O_RDWR), flock.SetPermissions(0o600))
	ok, err := l.TryLock()
	if err != nil {
		return nil, fmt.Errorf("lock daemon: %w", err)
	}
	if !ok {
		return nil, fmt.Errorf("%w (lock %s held)", ErrDaemonRunning, l.Path())
	}
	return l.Unlock, nil
}

// OpenLog opens (appending, 0600) a log file in the runtime directory's
// logs/ folder. Hooks log there because their stdout is Claude's protocol
// and their stderr is shown to Claude.
func (d *Dir) OpenLog(name string) (*os.File, error) {
	p, err := d.subdir("logs")
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(p, filepath.Base(name)), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open log: %w", err)
	}
	return f, nil
}

// Uploads returns (creating it) the directory for files a person attached
// to messages for one session.
func (d *Dir) Uploads(session string) (string, error) { return d.sessionDir("uploads", session) }

// Outputs returns (creating it) the directory Claude saves files to for
// [DISCORD_ATTACH: name] markers in one session.
func (d *Dir) Outputs(session string) (string, error) { return d.sessionDir("outputs", session) }

func (d *Dir) sessionDir(kind, session string) (string, error) {
	if !validKey(session) {
		return "", fmt.Errorf("%w: %q", ErrBadKey, session)
	}
	parent, err := d.subdir(kind)
	if err != nil {
		return "", err
	}
	p := filepath.Join(parent, session)
	if err := os.Mkdir(p, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("create %s dir: %w", kind, err)
	}
	return p, nil
}

// ClaudeSettings is where the daemon writes the --settings file that
// registers the hooks for the sessions it starts.
func (d *Dir) ClaudeSettings() string { return filepath.Join(d.root, "claude-settings.json") }

// WriteFile writes a file under the runtime directory atomically with mode 0600.
func (d *Dir) WriteFile(path string, data []byte) error {
	if rel, err := filepath.Rel(d.root, path); err != nil || strings.HasPrefix(rel, "..") {
		return fmt.Errorf("write %s: outside the runtime directory", path)
	}
	return writeAtomic(path, data)
}

// LockChannel serializes posting to one Discord channel across the hooks
// and the daemon's outbox drain, so replies keep their order. The lock files
// (one per channel) are never removed: see Collection on why.
func (d *Dir) LockChannel(ctx context.Context, channelID string) (unlock func(), err error) {
	if !validKey(channelID) {
		return nil, fmt.Errorf("%w: %q", ErrBadKey, channelID)
	}
	dir, err := d.subdir("locks")
	if err != nil {
		return nil, err
	}
	l := flock.New(filepath.Join(dir, "channel-"+channelID), flock.SetFlag(os.O_CREATE|os.O_RDWR), flock.SetPermissions(0o600))
	ok, err := l.TryLockContext(ctx, lockRetry)
	if err != nil || !ok {
		return nil, fmt.Errorf("lock channel %s: %w", channelID, errors.Join(err, ctx.Err()))
	}
	return func() { _ = l.Close() }, nil
}
