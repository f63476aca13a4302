package state

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// The runtime dir vanishes and someone creates it again (0700, even as
// this user): nothing in it is trusted any more, neither reads nor writes.
func TestReplacedDirIsRefused(t *testing.T) {
	root := filepath.Join(t.TempDir(), "rt")
	s, err := OpenStore(root)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.Outbox.Update(ctx, "k1", func(o *Outbound) error { o.Content = "mine"; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := s.Dir.Verify(); err != nil {
		t.Fatalf("Verify of the dir just opened: %v", err)
	}
	if err := os.Rename(root, root+".old"); err != nil {
		t.Fatal(err)
	}
	// The impostor: same path, a record naming a private file.
	planted, err := OpenStore(root)
	if err != nil {
		t.Fatal(err)
	}
	planted.Outbox.Update(ctx, "k1", func(o *Outbound) error { o.Files = []string{"/home/u/.ssh/id_ed25519"}; return nil })

	if err := s.Dir.Verify(); !errors.Is(err, ErrUnsafeDir) {
		t.Fatalf("Verify after the dir was replaced = %v, want ErrUnsafeDir", err)
	}
	if o, err := s.Outbox.Get("k1"); !errors.Is(err, ErrUnsafeDir) {
		t.Fatalf("Get from the replaced dir = %+v, %v; want ErrUnsafeDir", o, err)
	}
	if all, err := s.Outbox.List(); !errors.Is(err, ErrUnsafeDir) || len(all) != 0 {
		t.Fatalf("List from the replaced dir = %v, %v; want nothing and ErrUnsafeDir", all, err)
	}
	if _, err := s.Sessions.Update(ctx, "x", func(*Session) error { return nil }); !errors.Is(err, ErrUnsafeDir) {
		t.Fatalf("Update in the replaced dir = %v, want ErrUnsafeDir", err)
	}
	if err := s.Dir.WriteFile(filepath.Join(s.Dir.Root(), "some.json"), []byte("{}")); !errors.Is(err, ErrUnsafeDir) {
		t.Fatalf("WriteFile in the replaced dir = %v, want ErrUnsafeDir", err)
	}
	if _, err := s.Dir.Uploads("x"); !errors.Is(err, ErrUnsafeDir) {
		t.Fatalf("Uploads in the replaced dir = %v, want ErrUnsafeDir", err)
	}
	if _, err := s.Dir.LockChannel(ctx, "c"); !errors.Is(err, ErrUnsafeDir) {
		t.Fatalf("LockChannel in the replaced dir = %v, want ErrUnsafeDir", err)
	}
	if _, err := os.Stat(filepath.Join(root, "sessions", "x.json")); err == nil {
		t.Fatal("a record was written into the replaced dir")
	}
	// A dir that is gone altogether fails the same way.
	os.RemoveAll(root)
	if err := s.Dir.Verify(); err == nil {
		t.Fatal("Verify of a vanished dir passed")
	}
}

// The single-instance lock is on the directory: deleting daemon.lock (a tmp
// cleaner, a person) does not let a second daemon in.
func TestSecondDaemonRefusedWithoutLockFile(t *testing.T) {
	root := filepath.Join(t.TempDir(), "rt")
	d, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := d.LockDaemon()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "daemon.lock")); err != nil {
		t.Fatal(err)
	}
	d2, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if u, err := d2.LockDaemon(); !errors.Is(err, ErrDaemonRunning) {
		if u != nil {
			u()
		}
		t.Fatalf("second daemon after daemon.lock was deleted: %v, want ErrDaemonRunning", err)
	}
	if err := unlock(); err != nil {
		t.Fatal(err)
	}
	u, err := d2.LockDaemon()
	if err != nil {
		t.Fatalf("lock after the first daemon stopped: %v", err)
	}
	u()
}

// What the daemon needs for as long as it runs gets a fresh mtime, so an
// age-based cleaner leaves it; records pruned by age keep theirs.
func TestTouchRefreshesWhatMustLive(t *testing.T) {
	root := filepath.Join(t.TempDir(), "rt")
	s, err := OpenStore(root)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	unlock, err := s.Dir.LockDaemon()
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	s.Bots.Update(ctx, "home", func(b *Bot) error { b.Instance = "i"; return nil })
	s.Turns.Update(ctx, "t1", func(*Turn) error { return nil })
	lock, _ := s.Dir.LockChannel(ctx, "c1")
	lock()
	pols, _ := OpenPolicies(s.Dir)
	pols.Update(ctx, PoliciesKey, func(p *Policies) error { p.AuditDir = "/a"; return nil })
	ext, _ := OpenExtras(s.Dir)
	ext.Prefs.Update(ctx, "u1", func(*Prefs) error { return nil })
	old := time.Now().Add(-20 * 24 * time.Hour)
	live := []string{root, filepath.Join(root, "daemon.lock"), filepath.Join(root, "bots"),
		filepath.Join(root, "bots", "home.json"), filepath.Join(root, "bots", ".lock"), filepath.Join(root, "locks", "channel-c1"),
		filepath.Join(root, "policies", "policies.json"), filepath.Join(root, "prefs", "u1.json")}
	turn := filepath.Join(root, "turns", "t1.json")
	for _, p := range append(live, turn) {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Dir.Touch(); err != nil {
		t.Fatal(err)
	}
	for _, p := range live {
		if fi, err := os.Stat(p); err != nil || time.Since(fi.ModTime()) > time.Hour {
			t.Errorf("%s: not touched (%v)", p, err)
		}
	}
	if fi, _ := os.Stat(turn); time.Since(fi.ModTime()) < time.Hour {
		t.Error("a turn record was touched; it must age")
	}
}

func TestDefaultRuntimeDirPrefersPrivateXDG(t *testing.T) {
	tmp := filepath.Join(os.TempDir(), "ccbridge-"+strconv.Itoa(os.Getuid()))
	xdg := t.TempDir()
	os.Chmod(xdg, 0o700)
	t.Setenv(EnvRuntimeDir, "")
	t.Setenv("XDG_RUNTIME_DIR", xdg)
	defer func(l func() bool) { lingering = l }(lingering)
	lingering = func() bool { return true }
	if got := DefaultRuntimeDir(); got != filepath.Join(xdg, "ccbridge") {
		t.Errorf("private XDG_RUNTIME_DIR: %s, want %s/ccbridge", got, xdg)
	}
	lingering = func() bool { return false }
	if got := DefaultRuntimeDir(); got != tmp {
		t.Errorf("XDG_RUNTIME_DIR removed at logout (no linger): %s, want %s", got, tmp)
	}
	lingering = func() bool { return true }
	os.Chmod(xdg, 0o755)
	if got := DefaultRuntimeDir(); got != tmp {
		t.Errorf("XDG_RUNTIME_DIR readable by others: %s, want %s", got, tmp)
	}
	t.Setenv("XDG_RUNTIME_DIR", "")
	if got := DefaultRuntimeDir(); got != tmp {
		t.Errorf("no XDG_RUNTIME_DIR: %s, want %s", got, tmp)
	}
	t.Setenv(EnvRuntimeDir, "/x/y")
	t.Setenv("XDG_RUNTIME_DIR", xdg)
	if got := DefaultRuntimeDir(); got != "/x/y" {
		t.Errorf("override: %s", got)
	}
}

// Uploads and outputs live in their own subtree, apart from the records
// that hold the tokens (bots/) and the decisions (requests/).
func TestFilesAreApartFromTokensAndDecisions(t *testing.T) {
	root := filepath.Join(t.TempDir(), "rt")
	s, err := OpenStore(root)
	if err != nil {
		t.Fatal(err)
	}
	up, err := s.Dir.Uploads("s1")
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Dir.Outputs("s1")
	if err != nil {
		t.Fatal(err)
	}
	files := filepath.Join(root, "files")
	for _, p := range []string{up, out} {
		if rel, err := filepath.Rel(files, p); err != nil || rel == "." || rel[0] == '.' {
			t.Errorf("%s is not under %s", p, files)
		}
		if fi, err := os.Lstat(p); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v, %v; want a 0700 dir", p, fi.Mode(), err)
		}
	}
	// A symlink planted for a session's folder is refused, not followed.
	os.Symlink(t.TempDir(), filepath.Join(files, "outputs", "s2"))
	if p, err := s.Dir.Outputs("s2"); !errors.Is(err, ErrUnsafeDir) {
		t.Fatalf("Outputs through a symlink = %s, %v; want ErrUnsafeDir", p, err)
	}
}

// Opened to others, or removed and re-created in place (the inode held
// open cannot be reused): both fail Verify.
func TestVerifyNoticesChmodAndRecreation(t *testing.T) {
	root := filepath.Join(t.TempDir(), "rt")
	d, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(root, 0o755)
	if err := d.Verify(); !errors.Is(err, ErrUnsafeDir) {
		t.Fatalf("Verify of a 0755 dir = %v, want ErrUnsafeDir", err)
	}
	os.Chmod(root, 0o700)
	if err := d.Verify(); err != nil {
		t.Fatalf("Verify after chmod back = %v", err)
	}
	os.Remove(root)
	os.Mkdir(root, 0o700)
	if err := d.Verify(); !errors.Is(err, ErrUnsafeDir) {
		t.Fatalf("Verify of a re-created dir = %v, want ErrUnsafeDir", err)
	}
}

// A hook whose shell lacks the daemon's environment finds the runtime
// directory a daemon keeps, not an empty one (review 2, finding 6d).
func TestHookFindsTheDaemonsRuntimeDir(t *testing.T) {
	tmp, run := filepath.Join(t.TempDir(), "tmp-rt"), filepath.Join(t.TempDir(), "run-rt")
	if got := freshestRuntime([]string{tmp, run}); got != tmp {
		t.Errorf("with no routes anywhere: %s", got)
	}
	for _, d := range []string{tmp, run} {
		s, err := OpenStore(d)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Routes.Update(context.Background(), RoutesKey, func(*Routes) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-48 * time.Hour)
	os.Chtimes(filepath.Join(tmp, "routes", RoutesKey+".json"), old, old) // a daemon that ran there once
	if got := freshestRuntime([]string{tmp, run}); got != run {
		t.Errorf("got %s, want the directory a daemon keeps", got)
	}
}
