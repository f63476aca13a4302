package state

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/testutil/testenv"
)

type counter struct {
	N       int      `json:"n"`
	Writers []string `json:"writers"`
}

func testCollection(t *testing.T, root string) *Collection[counter] {
	t.Helper()
	d, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	c, err := newCollection[counter](d, "counters", 1)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestMain lets the test binary act as a separate writer process.
func TestMain(m *testing.M) {
	if root := os.Getenv("STATE_TEST_HELPER_ROOT"); root != "" {
		os.Exit(helperIncrement(root))
	}
	if root := os.Getenv("STATE_TEST_KEY_ROOT"); root != "" {
		os.Exit(helperKey(root))
	}
	os.Exit(m.Run())
}

func helperIncrement(root string) int {
	d, err := Open(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	c, err := newCollection[counter](d, "counters", 1)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	n, _ := strconv.Atoi(os.Getenv("STATE_TEST_HELPER_N"))
	for range n {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := c.Update(ctx, "shared", func(v *counter) error { v.N++; return nil })
		cancel()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

func TestOpenCreatesPrivateDir(t *testing.T) {
	root := filepath.Join(t.TempDir(), "rt")
	c := testCollection(t, root)
	fi, err := os.Stat(root)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("root mode = %v, %v; want 0700", fi.Mode(), err)
	}
	if _, err := c.Update(context.Background(), "k", func(v *counter) error { v.N = 1; return nil }); err != nil {
		t.Fatal(err)
	}
	fi, err = os.Stat(filepath.Join(c.dir, "k.json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("record mode = %v, %v; want 0600", fi.Mode(), err)
	}
}

func TestOpenRefusesHostileDirs(t *testing.T) {
	base := t.TempDir()
	cases := map[string]func(p string){
		"symlink": func(p string) {
			target := filepath.Join(base, "target")
			os.Mkdir(target, 0o700)
			os.Symlink(target, p)
		},
		"group readable": func(p string) { os.Mkdir(p, 0o750); os.Chmod(p, 0o750) },
		"world writable": func(p string) { os.Mkdir(p, 0o777); os.Chmod(p, 0o777) },
		"a file":         func(p string) { os.WriteFile(p, nil, 0o600) },
		"other owner": func(p string) {
			os.Mkdir(p, 0o700)
			if err := os.Chown(p, os.Getuid()+1, -1); err != nil {
				t.Logf("chown: %v", err)
			}
		},
	}
	for name, setup := range cases {
		t.Run(name, func(t *testing.T) {
			if name == "other owner" && os.Getuid() != 0 {
				testenv.SkipUnlessAllowed(t, "chown to another uid needs root")
			}
			p := filepath.Join(base, name)
			setup(p)
			_, err := Open(p)
			if !errors.Is(err, ErrUnsafeDir) {
				t.Fatalf("Open(%s) = %v, want ErrUnsafeDir", name, err)
			}
			t.Log(err)
		})
	}
}

func TestUpdateGoroutinesLoseNothing(t *testing.T) {
	c := testCollection(t, filepath.Join(t.TempDir(), "rt"))
	const workers, each = 8, 50
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if _, err := c.Update(context.Background(), "shared", func(v *counter) error {
					v.N++
					v.Writers = append(v.Writers, strconv.Itoa(w))
					return nil
				}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	got, err := c.Get("shared")
	if err != nil || got.N != workers*each || len(got.Writers) != workers*each {
		t.Fatalf("N = %d (%d writers), %v; want %d", got.N, len(got.Writers), err, workers*each)
	}
}

func TestUpdateProcessesLoseNothing(t *testing.T) {
	root := filepath.Join(t.TempDir(), "rt")
	c := testCollection(t, root)
	const procs, each = 6, 40
	var cmds []*exec.Cmd
	for range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "STATE_TEST_HELPER_ROOT="+root, "STATE_TEST_HELPER_N="+strconv.Itoa(each))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	// Read concurrently with the writers: a torn file would fail to decode.
	done := make(chan struct{})
	var readErr error
	go func() {
		defer close(done)
		for {
			v, err := c.Get("shared")
			if err != nil && !errors.Is(err, ErrNotFound) {
				readErr = err
				return
			}
			if v.N == procs*each {
				return
			}
		}
	}()
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("writer process: %v", err)
		}
	}
	<-done
	if readErr != nil {
		t.Fatalf("lock-free reader saw a bad file: %v", readErr)
	}
	got, err := c.Get("shared")
	if err != nil || got.N != procs*each {
		t.Fatalf("N = %d, %v; want %d", got.N, err, procs*each)
	}
}

func TestUpdateErrorWritesNothing(t *testing.T) {
	c := testCollection(t, filepath.Join(t.TempDir(), "rt"))
	boom := errors.New("boom")
	if _, err := c.Update(context.Background(), "k", func(v *counter) error { v.N = 5; return boom }); !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if _, err := c.Get("k"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get after failed update = %v, want ErrNotFound", err)
	}
}

func TestCreateOnce(t *testing.T) {
	c := testCollection(t, filepath.Join(t.TempDir(), "rt"))
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := c.Create(context.Background(), "once", counter{N: i})
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d creators won, want 1", wins)
	}
}

func TestKeysCannotEscape(t *testing.T) {
	c := testCollection(t, filepath.Join(t.TempDir(), "rt"))
	for _, k := range []string{"../x", "/etc/passwd", ".hidden", "a/b", "", "a..b", "x\x00"} {
		if _, err := c.Update(context.Background(), k, func(*counter) error { return nil }); !errors.Is(err, ErrBadKey) {
			t.Errorf("key %q: err = %v, want ErrBadKey", k, err)
		}
	}
}

func TestListAndDelete(t *testing.T) {
	c := testCollection(t, filepath.Join(t.TempDir(), "rt"))
	ctx := context.Background()
	for _, k := range []string{"b", "a"} {
		c.Update(ctx, k, func(v *counter) error { v.N = 1; return nil })
	}
	os.WriteFile(filepath.Join(c.dir, ".tmp-123"), []byte("junk"), 0o600)
	keys, err := c.Keys()
	if err != nil || fmt.Sprint(keys) != "[a b]" {
		t.Fatalf("Keys = %v, %v", keys, err)
	}
	if err := c.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, "a"); err != nil {
		t.Fatalf("second delete: %v", err)
	}
	if keys, _ := c.Keys(); fmt.Sprint(keys) != "[b]" {
		t.Fatalf("Keys after delete = %v", keys)
	}
}

func waitKey(t *testing.T, ch <-chan string, want string) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case k := <-ch:
			if k == want {
				return
			}
		case <-deadline:
			t.Fatalf("no event for %q", want)
		}
	}
}

func TestWatchSeesAtomicWritesAndDeletes(t *testing.T) {
	c := testCollection(t, filepath.Join(t.TempDir(), "rt"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for name, watch := range map[string]func(context.Context) (<-chan string, error){
		"fsnotify": c.Watch,
		"poll": func(ctx context.Context) (<-chan string, error) {
			out := make(chan string, 64)
			prev := c.snapshot()
			go c.poll(ctx, out, prev)
			return out, nil
		},
	} {
		t.Run(name, func(t *testing.T) {
			ch, err := watch(ctx)
			if err != nil {
				t.Fatal(err)
			}
			key := "w-" + name
			c.Update(ctx, key, func(v *counter) error { v.N = 1; return nil })
			waitKey(t, ch, key)
			c.Update(ctx, key, func(v *counter) error { v.N = 2; return nil })
			waitKey(t, ch, key)
			c.Delete(ctx, key)
			waitKey(t, ch, key)
		})
	}
}

// After lost events (an fsnotify overflow) polling starts from nothing:
// every record is reported once, so what the lost events said is not lost.
func TestPollFromNothingReportsEveryRecord(t *testing.T) {
	c := testCollection(t, filepath.Join(t.TempDir(), "rt"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c.Update(ctx, "before", func(v *counter) error { v.N = 1; return nil })
	out := make(chan string, 64)
	go c.poll(ctx, out, nil)
	waitKey(t, out, "before")
}

func TestLockDaemonIsExclusive(t *testing.T) {
	d, err := Open(filepath.Join(t.TempDir(), "rt"))
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := d.LockDaemon()
	if err != nil {
		t.Fatal(err)
	}
	// flock locks belong to open file descriptions, so a second open in the
	// same process contends like another process would.
	if _, err := d.LockDaemon(); !errors.Is(err, ErrDaemonRunning) {
		t.Fatalf("second lock = %v, want ErrDaemonRunning", err)
	}
	unlock()
	unlock2, err := d.LockDaemon()
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	unlock2()
}

func TestRoutesMatchOnPathBoundaries(t *testing.T) {
	r := Routes{Routes: []Route{{Path: "/app", Project: "app"}, {Path: "/app/sub/", Project: "sub"}, {Path: "/srv", Project: "srv"}}}
	for cwd, want := range map[string]string{"/app": "app", "/app/x": "app", "/app/sub": "sub", "/app/sub/deep": "sub", "/app2": "", "/srvx": "", "/": ""} {
		got, ok := r.Match(cwd)
		if (want == "") == ok || got.Project != want {
			t.Errorf("Match(%q) = %q, %v; want %q", cwd, got.Project, ok, want)
		}
	}
}

// A message Discord refused for good leaves the outbox for outbox-failed/,
// whole, with why.
func TestFailOutboundKeepsTheMessage(t *testing.T) {
	s, err := OpenStore(filepath.Join(t.TempDir(), "rt"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	o := Outbound{Server: "home", ChannelID: "42", Content: "the reply", Files: []string{"/x/report.txt"}}
	if _, err := s.Outbox.Create(ctx, "k1", o); err != nil {
		t.Fatal(err)
	}
	p, err := s.FailOutbound(ctx, "k1", o, "404 Unknown Channel")
	if err != nil {
		t.Fatal(err)
	}
	if keys, _ := s.Outbox.Keys(); len(keys) != 0 {
		t.Fatalf("outbox = %v", keys)
	}
	kept, err := s.OutboxFailed.Get("k1")
	if err != nil || kept.Content != "the reply" || kept.Files[0] != "/x/report.txt" || kept.LastError != "404 Unknown Channel" {
		t.Fatalf("kept %+v, %v", kept, err)
	}
	if filepath.Dir(p) != filepath.Join(s.Dir.Root(), "outbox-failed") {
		t.Fatalf("kept in %s", p)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
}
