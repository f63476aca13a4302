// Package state is the only code that knows the paths, formats and locking of
// ccbridge's runtime directory (see DefaultRuntimeDir). The daemon
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
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gofrs/flock"
)

// EnvRuntimeDir overrides the runtime directory; the daemon passes it into
// every pane so hooks use the same one.
const EnvRuntimeDir = "CCBRIDGE_RUNTIME_DIR"

// DefaultRuntimeDir returns $CCBRIDGE_RUNTIME_DIR, else
// $XDG_RUNTIME_DIR/ccbridge when XDG_RUNTIME_DIR is a private directory of
// this user that outlives logins (systemd's /run/user/<uid>: no tmp
// cleaner; it is removed at the last logout unless the user lingers, which
// would stop a daemon left running in tmux), else /tmp/ccbridge-<uid>. The
// daemon and the hooks of hand-started sessions both call it, so they
// agree; the daemon also passes its choice to the panes it starts in
// CCBRIDGE_RUNTIME_DIR.
func DefaultRuntimeDir() string {
	if d := os.Getenv(EnvRuntimeDir); d != "" {
		return d
	}
	if x := os.Getenv("XDG_RUNTIME_DIR"); x != "" && filepath.IsAbs(x) && checkPrivate(x) == nil && lingering() {
		return filepath.Join(x, "ccbridge")
	}
	return filepath.Join(os.TempDir(), "ccbridge-"+strconv.Itoa(os.Getuid()))
}

// HookRuntimeDir is the runtime directory for a hook of a Claude that
// ccbridge did not start, which has no CCBRIDGE_RUNTIME_DIR unless its
// shell sets one. A shell without the daemon's environment (su, ssh
// without pam_systemd, cron) has no XDG_RUNTIME_DIR, so DefaultRuntimeDir
// would name /tmp while the daemon runs in systemd's /run/user/<uid>: no
// routes there, so no project's rules. Of the two, the hook takes the one
// whose routes a daemon wrote or refreshed (Touch) last.
func HookRuntimeDir() string {
	d := DefaultRuntimeDir()
	if os.Getenv(EnvRuntimeDir) != "" {
		return d
	}
	return freshestRuntime([]string{d, filepath.Join("/run/user", strconv.Itoa(os.Getuid()), "ccbridge")})
}

// freshestRuntime returns, of the directories that are private to this
// user (or not there yet), the one whose routes record changed last; the
// first of them when none has one; the first of all when none is usable,
// which Open then refuses. Only a usable directory's mtime counts: in
// /tmp another user can plant a directory whose routes look newer.
func freshestRuntime(dirs []string) string {
	best, at, usable := "", time.Time{}, false
	for _, d := range dirs {
		if err := checkPrivate(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if !usable {
			best, usable = d, true
		}
		if fi, err := os.Stat(filepath.Join(d, "routes", RoutesKey+".json")); err == nil && fi.ModTime().After(at) {
			best, at = d, fi.ModTime()
		}
	}
	if !usable {
		return dirs[0]
	}
	return best
}

// lingering reports whether systemd keeps this user's runtime directory
// after the last logout (loginctl enable-linger). A variable for tests.
var lingering = func() bool {
	u, err := user.Current()
	if err != nil {
		return false
	}
	_, err = os.Stat(filepath.Join("/var/lib/systemd/linger", u.Username))
	return err == nil
}

// Dir is an opened, checked runtime directory. It holds the directory open
// and remembers its device and inode, so Verify notices one that was removed
// and created again, by anyone: the open handle keeps the inode number from
// being reused, and a removed directory has no links.
type Dir struct {
	root     string
	f        *os.File
	dev, ino uint64
	log      atomic.Pointer[slog.Logger]
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
// read or written by someone else, or is no longer the one that was opened.
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
	f, err := os.OpenFile(root, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, fmt.Errorf("open runtime directory: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("check runtime directory: %w", err)
	}
	d := &Dir{root: root, f: f}
	d.dev, d.ino = fileID(fi)
	if err := d.Verify(); err != nil { // the path still names what was opened
		_ = f.Close()
		return nil, err
	}
	return d, nil
}

// Verify checks that the runtime directory is still the private directory
// Open checked: same device and inode, a directory, owned by this user,
// mode 0700. It costs one lstat, and every record access runs it first, so
// a directory that vanished and was created again (by a tmp cleaner and
// then another user) is never read from or written to. The daemon also runs
// it on a timer and stops when it fails.
func (d *Dir) Verify() error {
	fi, err := os.Lstat(d.root)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrUnsafeDir, d.root, err)
	}
	if dev, ino := fileID(fi); dev != d.dev || ino != d.ino {
		return fmt.Errorf("%w: %s was removed and created again since ccbridge opened it", ErrUnsafeDir, d.root)
	}
	// The path names the inode held open, so the inode number cannot have
	// been reused; it may still have been removed and be kept alive only
	// by this handle.
	held, err := d.f.Stat()
	if err != nil {
		return fmt.Errorf("check runtime directory: %w", err)
	}
	if st, ok := held.Sys().(*syscall.Stat_t); ok && st.Nlink == 0 {
		return fmt.Errorf("%w: %s was removed since ccbridge opened it", ErrUnsafeDir, d.root)
	}
	return checkInfo(d.root, fi)
}

func fileID(fi fs.FileInfo) (dev, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), st.Ino
	}
	return 0, 0
}

func checkPrivate(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return fmt.Errorf("check runtime directory: %w", err)
	}
	return checkInfo(path, fi)
}

// checkInfo refuses a symlink, a non-directory, another owner, or any
// access for group or others.
func checkInfo(path string, fi fs.FileInfo) error {
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
	if err := d.Verify(); err != nil {
		return "", err
	}
	p := filepath.Join(d.root, name)
	if err := os.Mkdir(p, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("create %s: %w", name, err)
	}
	return p, nil
}

// ErrDaemonRunning is returned by LockDaemon when another daemon holds the lock.
var ErrDaemonRunning = errors.New("another ccbridge daemon is running")

// LockDaemon takes the single-instance lock: an exclusive flock on the
// runtime directory itself (deleting a file inside cannot lose it, unlike a
// lock file's), plus daemon.lock for daemons of older versions. Both die
// with the process, so there is no stale PID file to clean up.
//
// Holding a lock on the directory also keeps systemd-tmpfiles' age-based
// cleanup out of it: tmpfiles.d(5) says the aging algorithm takes a BSD
// file lock on each directory it descends into and skips a directory (and
// everything below it) whose lock is already taken (systemd tries
// LOCK_EX|LOCK_NB, which fails while any other lock is held).
func (d *Dir) LockDaemon() (unlock func() error, err error) {
	if err := d.Verify(); err != nil {
		return nil, err
	}
	df, err := os.OpenFile(d.root, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, fmt.Errorf("lock daemon: %w", err)
	}
	if fi, err := df.Stat(); err != nil {
		_ = df.Close()
		return nil, fmt.Errorf("lock daemon: %w", err)
	} else if dev, ino := fileID(fi); dev != d.dev || ino != d.ino {
		_ = df.Close()
		return nil, fmt.Errorf("%w: %s was replaced while it was being locked", ErrUnsafeDir, d.root)
	}
	if err := syscall.Flock(int(df.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = df.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w (lock on %s held)", ErrDaemonRunning, d.root)
		}
		return nil, fmt.Errorf("lock daemon: %w", err)
	}
	l := flock.New(filepath.Join(d.root, "daemon.lock"), flock.SetFlag(os.O_CREATE|os.O_RDWR), flock.SetPermissions(0o600))
	ok, err := l.TryLock()
	if err != nil || !ok {
		_ = df.Close()
		if err != nil {
			return nil, fmt.Errorf("lock daemon: %w", err)
		}
		return nil, fmt.Errorf("%w (lock %s held)", ErrDaemonRunning, l.Path())
	}
	return func() error { return errors.Join(l.Unlock(), df.Close()) }, nil
}

// Touch sets the modification time of what must outlive an idle spell to
// now: the directories, lock files, the bots', routes' and policies'
// records, sessions, queued replies and the attention features' records. The directory lock already
// keeps systemd-tmpfiles away (see LockDaemon); this covers cleaners that
// go by age alone (tmpreaper, a cron job). Turns, requests, uploads and the
// like are left alone: they are pruned by age.
func (d *Dir) Touch() error {
	if err := d.Verify(); err != nil {
		return err
	}
	now := time.Now()
	var errs []error
	touch := func(p string) {
		if err := os.Chtimes(p, now, now); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	touch(d.root)
	touch(filepath.Join(d.root, "daemon.lock"))
	ents, err := os.ReadDir(d.root)
	if err != nil {
		return fmt.Errorf("touch runtime directory: %w", err)
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		sub := filepath.Join(d.root, e.Name())
		touch(sub)
		touch(filepath.Join(sub, ".lock"))
		if !keepAlive[e.Name()] {
			continue
		}
		files, err := os.ReadDir(sub)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, f := range files {
			if f.Type().IsRegular() {
				touch(filepath.Join(sub, f.Name()))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("touch runtime directory: %w", err)
	}
	return nil
}

// keepAlive are the folders whose every file Touch refreshes: among them
// the [policy] record the hooks enforce (a cleaner that removed it would
// make every governed call ask) and the attention features' records.
var keepAlive = map[string]bool{"bots": true, "routes": true, "sessions": true, "outbox": true, "locks": true,
	"policies": true, "statuses": true, "prefs": true, "delivered": true, "resumes": true, "waiting": true}

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

// Guarded returns the folders of the runtime directory that a Claude
// session has no business reading or writing: every one but files/ (the
// uploads it reads, the outputs it writes), so the bots' tokens, the
// policy record, sessions and requests among them. A session's settings
// deny them to its model.
func (d *Dir) Guarded() []string {
	names := map[string]bool{"bots": true, "policies": true, "sessions": true, "requests": true, "routes": true, "live": true}
	if ents, err := os.ReadDir(d.root); err == nil {
		for _, e := range ents {
			if e.IsDir() && e.Name() != filesDir {
				names[e.Name()] = true
			}
		}
	}
	out := make([]string, 0, len(names))
	for n := range names {
		out = append(out, filepath.Join(d.root, n))
	}
	slices.Sort(out)
	return out
}

// Files is the subtree for files people and Claude exchange (uploads and
// outputs), kept apart from the records that hold the bot tokens and the
// decisions, so a permission granted on one session's files (an
// "addDirectories" suggestion, say) never reaches them.
const filesDir = "files"

// Uploads returns (creating it) the directory for files a person attached
// to messages for one session: <runtime>/files/uploads/<session>.
func (d *Dir) Uploads(session string) (string, error) { return d.sessionDir("uploads", session) }

// Outputs returns (creating it) the directory Claude saves files to for
// [DISCORD_ATTACH: name] markers in one session:
// <runtime>/files/outputs/<session>.
func (d *Dir) Outputs(session string) (string, error) { return d.sessionDir("outputs", session) }

// sessionParent is the folder holding every session's folder of one kind.
func (d *Dir) sessionParent(kind string) string { return filepath.Join(d.root, filesDir, kind) }

func (d *Dir) sessionDir(kind, session string) (string, error) {
	if !validKey(session) {
		return "", fmt.Errorf("%w: %q", ErrBadKey, session)
	}
	files, err := d.subdir(filesDir)
	if err != nil {
		return "", err
	}
	p := files
	for _, name := range []string{kind, session} {
		p = filepath.Join(p, name)
		if err := mkdirPrivate(p); err != nil {
			return "", fmt.Errorf("create %s dir: %w", kind, err)
		}
	}
	return p, nil
}

// mkdirPrivate creates a 0700 directory if it does not exist, and refuses
// a symlink or non-directory in its place.
func mkdirPrivate(p string) error {
	if err := os.Mkdir(p, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	fi, err := os.Lstat(p)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%w: %s is not a directory", ErrUnsafeDir, p)
	}
	return nil
}

// WriteFile writes a file under the runtime directory atomically with mode 0600.
func (d *Dir) WriteFile(path string, data []byte) error {
	if rel, err := filepath.Rel(d.root, path); err != nil || strings.HasPrefix(rel, "..") {
		return fmt.Errorf("write %s: outside the runtime directory", path)
	}
	if err := d.Verify(); err != nil {
		return err
	}
	return writeAtomic(path, data)
}

// LockChannel serializes posting to one channel across the hooks
// and the daemon's outbox drain, so replies keep their order. The lock files
// (one per channel) are never removed: see Collection on why.
func (d *Dir) LockChannel(ctx context.Context, channelID string) (unlock func(), err error) {
	name := "channel-" + channelID // a Telegram chat's id starts with '-'
	if !validKey(name) {
		return nil, fmt.Errorf("%w: %q", ErrBadKey, channelID)
	}
	dir, err := d.subdir("locks")
	if err != nil {
		return nil, err
	}
	l := flock.New(filepath.Join(dir, name), flock.SetFlag(os.O_CREATE|os.O_RDWR), flock.SetPermissions(0o600))
	ok, err := l.TryLockContext(ctx, lockRetry)
	if err != nil || !ok {
		return nil, fmt.Errorf("lock channel %s: %w", channelID, errors.Join(err, ctx.Err()))
	}
	return func() { _ = l.Close() }, nil
}
