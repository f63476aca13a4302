package relay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
)

// fake is a chat.Poster that records each call as one line and answers
// with err when set.
type fake struct {
	mu    sync.Mutex
	calls []string
	n     int
	err   error
	delay time.Duration
	// started, when set, hears of each call as it starts.
	started chan struct{}
}

func (f *fake) rec(format string, a ...any) (string, error) {
	if f.started != nil {
		f.started <- struct{}{}
	}
	if f.delay > 0 {
		time.Sleep(f.delay)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf(format, a...))
	f.n++
	return fmt.Sprintf("m%d", f.n), f.err
}

func (f *fake) Post(_ context.Context, ch string, m chat.Message) (string, error) {
	return f.rec("post %s %+v", ch, m)
}
func (f *fake) PostOnce(_ context.Context, ch, nonce string, m chat.Message) (string, error) {
	return f.rec("post_once %s %s %+v", ch, nonce, m)
}
func (f *fake) PostCard(_ context.Context, ch string, m chat.Message) (string, []string, error) {
	id, err := f.rec("post_card %s %+v", ch, m)
	return id, []string{"f1", "f2"}, err
}
func (f *fake) Edit(_ context.Context, ch, id string, m chat.Message) error {
	_, err := f.rec("edit %s %s %+v", ch, id, m)
	return err
}
func (f *fake) EditCard(_ context.Context, ch, id string, m chat.Message, outcome string) error {
	_, err := f.rec("edit_card %s %s %+v %s", ch, id, m, outcome)
	return err
}
func (f *fake) SendMentioning(_ context.Context, ch, nonce, content string, users []string) (string, error) {
	return f.rec("mention %s %s %s %v", ch, nonce, content, users)
}
func (f *fake) Notice(_ context.Context, ch, text string, per time.Duration) error {
	_, err := f.rec("notice %s %s %v", ch, text, per)
	return err
}
func (f *fake) React(_ context.Context, ch, id, emoji string) error {
	_, err := f.rec("react %s %s %s", ch, id, emoji)
	return err
}
func (f *fake) Typing(_ context.Context, ch string) error {
	_, err := f.rec("typing %s", ch)
	return err
}
func (f *fake) StartThread(_ context.Context, ch, name string) (string, error) {
	return f.rec("thread %s %s", ch, name)
}
func (f *fake) StartPrivateThread(_ context.Context, ch, name string, members []string) (string, []string, error) {
	id, err := f.rec("private %s %s %v", ch, name, members)
	return id, members[1:], err
}
func (f *fake) ArchiveThread(_ context.Context, id string) error {
	_, err := f.rec("archive %s", id)
	return err
}
func (f *fake) EveryoneCanView(_ context.Context, ch string) (bool, error) {
	_, err := f.rec("view %s", ch)
	return true, err
}
func (f *fake) Download(_ context.Context, url string, limit int64) ([]byte, error) {
	_, err := f.rec("download %s %d", url, limit)
	return []byte("bytes of " + url), err
}
func (f *fake) Limit() int { return 4096 }

func (f *fake) log() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// serve runs a server for the server "home" (backed by p) in a private
// directory and returns its socket.
func serve(t *testing.T, p chat.Poster) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "relay") // short: a socket path has 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := SocketPath(dir)
	s, err := Listen(path, func(server string) (chat.Poster, bool) { return p, server == "home" }, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return path
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

// Every chat.Poster method crosses the socket with all its arguments and
// comes back with all its results.
func TestEveryMethodRoundTrips(t *testing.T) {
	f := &fake{}
	c := NewClient(serve(t, f), "home", 4096)
	x := ctx(t)
	m := chat.Message{Content: "hi", Rows: []chat.Row{{Buttons: []chat.Button{{Label: "OK", CustomID: "ok", Style: 1}}}},
		Files: []chat.File{{Name: "a.bin", Data: []byte{0, 1, 2, 255}}}, ReplyTo: "9"}
	var got []any
	must := func(vs ...any) {
		t.Helper()
		if err, _ := vs[len(vs)-1].(error); err != nil {
			t.Fatal(err)
		}
		got = append(got, vs[:len(vs)-1]...)
	}
	must(c.Post(x, "c1", m))
	must(c.PostOnce(x, "c1", "n1", m))
	must(c.PostCard(x, "c1", m))
	must(c.Edit(x, "c1", "m1", m))
	must(c.EditCard(x, "c1", "m1", m, "Allowed"))
	must(c.SendMentioning(x, "c1", "n2", "<@1> look", []string{"1"}))
	must(c.Notice(x, "c1", "note", 3*time.Second))
	must(c.React(x, "c1", "m1", "👍"))
	must(c.Typing(x, "c1"))
	must(c.StartThread(x, "c1", "t"))
	must(c.StartPrivateThread(x, "c1", "p", []string{"1", "2"}))
	must(c.ArchiveThread(x, "t1"))
	must(c.EveryoneCanView(x, "c1"))
	must(c.Download(x, "https://cdn/x", 99))
	want := []any{"m1", "m2", "m3", []string{"f1", "f2"}, "m6", "m10", "m11", []string{"2"}, true, []byte("bytes of https://cdn/x")}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("results = %#v\nwant %#v", got, want)
	}
	ms := fmt.Sprintf("%+v", m)
	wantCalls := []string{"post c1 " + ms, "post_once c1 n1 " + ms, "post_card c1 " + ms, "edit c1 m1 " + ms, "edit_card c1 m1 " + ms + " Allowed",
		"mention c1 n2 <@1> look [1]", "notice c1 note 3s", "react c1 m1 👍", "typing c1", "thread c1 t", "private c1 p [1 2]", "archive t1",
		"view c1", "download https://cdn/x 99"}
	if calls := f.log(); !slices.Equal(calls, wantCalls) {
		t.Errorf("calls =\n%s\nwant\n%s", strings.Join(calls, "\n"), strings.Join(wantCalls, "\n"))
	}
	if c.Limit() != 4096 || NewClient("x", "home", 0).Limit() != chat.Limit {
		t.Error("Limit is not the one given, or Discord's by default")
	}
}

// What a failure means crosses the wire: each comes out as its chat
// sentinel, with its text and the platform's wait.
func TestErrorKindsCrossTheWire(t *testing.T) {
	f := &fake{}
	c := NewClient(serve(t, f), "home", 0)
	cases := []struct {
		err  error
		want error
		wait time.Duration
	}{
		{retryable{fmt.Errorf("post: %w", chat.ErrTransient), 3 * time.Second}, chat.ErrTransient, 3 * time.Second},
		{fmt.Errorf("HTTP 401: %w", chat.ErrAuth), chat.ErrAuth, 0},
		{fmt.Errorf("HTTP 403 50013: %w", chat.ErrMissingPermission), chat.ErrMissingPermission, 0},
		{fmt.Errorf("HTTP 404 10008: %w", chat.ErrUnknownMessage), chat.ErrUnknownMessage, 0},
		{errors.New("HTTP 400 50035 Invalid Form Body"), nil, 0},
	}
	sentinels := []error{chat.ErrTransient, chat.ErrAuth, chat.ErrMissingPermission, chat.ErrUnknownMessage}
	for _, tc := range cases {
		f.err = tc.err
		_, err := c.PostOnce(ctx(t), "c1", "n", chat.Message{Content: "x"})
		if err == nil || err.Error() != tc.err.Error() || chat.RetryAfter(err) != tc.wait {
			t.Errorf("%v: got %v (wait %v)", tc.err, err, chat.RetryAfter(err))
		}
		for _, s := range sentinels {
			if errors.Is(err, s) != (s == tc.want) {
				t.Errorf("%v: errors.Is(%v) = %v", tc.err, s, errors.Is(err, s))
			}
		}
	}
	// A server the daemon has no bot for: kept for when it has one.
	if _, err := NewClient(c.path, "gone", 0).Post(ctx(t), "c1", chat.Message{}); !errors.Is(err, chat.ErrTransient) {
		t.Errorf("unknown server: %v", err)
	}
}

type retryable struct {
	error
	wait time.Duration
}

func (r retryable) Unwrap() error             { return r.error }
func (r retryable) RetryAfter() time.Duration { return r.wait }

// No daemon (no socket, a dead one's socket, one that does not answer in
// time): the call fails as transient, for the outbox.
func TestDaemonAbsentIsTransient(t *testing.T) {
	dir, _ := os.MkdirTemp("", "relay")
	defer os.RemoveAll(dir)
	path := SocketPath(dir)
	if _, err := NewClient(path, "home", 0).Post(ctx(t), "c", chat.Message{}); !errors.Is(err, chat.ErrTransient) {
		t.Errorf("no socket: %v", err)
	}
	// A socket nobody listens on any more.
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	os.Chmod(path, 0o600)
	ln.Close()
	if _, err := NewClient(path, "home", 0).Post(ctx(t), "c", chat.Message{}); !errors.Is(err, chat.ErrTransient) {
		t.Errorf("refused: %v", err)
	}
	// A daemon that takes longer than the caller's deadline.
	f := &fake{delay: 2 * time.Second}
	c := NewClient(serve(t, f), "home", 0)
	x, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := c.Post(x, "c", chat.Message{}); !errors.Is(err, chat.ErrTransient) || time.Since(start) > time.Second {
		t.Errorf("slow daemon: %v after %v", err, time.Since(start))
	}
}

// A daemon that crashed left its socket: the next one replaces it. What is
// not a socket is left alone and said.
func TestStaleSocketIsReplaced(t *testing.T) {
	dir, _ := os.MkdirTemp("", "relay")
	defer os.RemoveAll(dir)
	path := SocketPath(dir)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	f := &fake{}
	s, err := Listen(path, func(string) (chat.Poster, bool) { return f, true }, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if fi, err := os.Lstat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode: %v, %v", fi.Mode(), err)
	}
	if _, err := NewClient(path, "home", 0).Post(ctx(t), "c", chat.Message{Content: "x"}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "file.sock")
	os.WriteFile(file, nil, 0o600)
	if _, err := Listen(file, nil, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Errorf("listen over a file: %v", err)
	}
	if _, err := os.Stat(file); err != nil {
		t.Error("the file was removed")
	}
}

// The client hands a post only to a socket of its user's that no other
// user may open; the server answers only its own uid.
func TestStrangersAreRefused(t *testing.T) {
	f := &fake{}
	path := serve(t, f)
	os.Chmod(path, 0o666)
	if _, err := NewClient(path, "home", 0).Post(ctx(t), "c", chat.Message{Content: "secret"}); !errors.Is(err, chat.ErrTransient) || !strings.Contains(err.Error(), "other users") {
		t.Errorf("open socket: %v", err)
	}
	dir := filepath.Dir(path)
	file := filepath.Join(dir, "plain")
	os.WriteFile(file, nil, 0o600)
	if _, err := NewClient(file, "home", 0).Post(ctx(t), "c", chat.Message{Content: "secret"}); !errors.Is(err, chat.ErrTransient) || !strings.Contains(err.Error(), "not a socket") {
		t.Errorf("plain file: %v", err)
	}
	if len(f.log()) != 0 {
		t.Fatalf("posted for a stranger: %q", f.log())
	}

	// Another uid at the other end (as SO_PEERCRED would say it).
	sdir, _ := os.MkdirTemp("", "relay")
	defer os.RemoveAll(sdir)
	spath := SocketPath(sdir)
	other := func(*net.UnixConn) (int, error) { return os.Getuid() + 1, nil }
	s, err := listen(spath, func(string) (chat.Poster, bool) { return f, true }, slog.New(slog.DiscardHandler), other)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := NewClient(spath, "home", 0).Post(ctx(t), "c", chat.Message{Content: "x"}); !errors.Is(err, chat.ErrTransient) {
		t.Errorf("stranger: %v", err)
	}
	if len(f.log()) != 0 {
		t.Fatalf("posted for a stranger: %q", f.log())
	}
}

// The real peer check sees this process's own uid.
func TestPeerIsThisUser(t *testing.T) {
	f := &fake{}
	path := serve(t, f)
	conn, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if uid, err := peerUID(conn); err != nil || uid != os.Getuid() {
		t.Fatalf("peer uid %d, %v", uid, err)
	}
}

// Many hooks at once: each call gets its own answer.
func TestConcurrentPosts(t *testing.T) {
	f := &fake{delay: 5 * time.Millisecond}
	c := NewClient(serve(t, f), "home", 0)
	var wg sync.WaitGroup
	ids := make([]string, 40)
	errs := make([]error, 40)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids[i], errs[i] = c.PostOnce(ctx(t), "c", fmt.Sprint(i), chat.Message{Content: fmt.Sprint(i)})
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for i, id := range ids {
		if errs[i] != nil || id == "" || seen[id] {
			t.Fatalf("post %d: %q, %v", i, id, errs[i])
		}
		seen[id] = true
	}
	if len(f.log()) != 40 {
		t.Fatalf("%d calls", len(f.log()))
	}
}

// Close lets a call under way finish, then takes no more.
func TestCloseFinishesCallsUnderWay(t *testing.T) {
	f := &fake{delay: 300 * time.Millisecond, started: make(chan struct{}, 1)}
	dir, _ := os.MkdirTemp("", "relay")
	defer os.RemoveAll(dir)
	path := SocketPath(dir)
	s, err := Listen(path, func(string) (chat.Poster, bool) { return f, true }, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	c := NewClient(path, "home", 0)
	done := make(chan error, 1)
	go func() { _, err := c.Post(ctx(t), "c", chat.Message{}); done <- err }()
	<-f.started
	s.Close()
	if err := <-done; err != nil {
		t.Fatalf("call under way: %v", err)
	}
	if _, err := c.Post(ctx(t), "c", chat.Message{}); !errors.Is(err, chat.ErrTransient) {
		t.Fatalf("after close: %v", err)
	}
}

// The hook and the daemon's outbox derive the same nonce from an entry's
// key, within the length Discord takes.
func TestNonceIsStableAndShort(t *testing.T) {
	a, b := Nonce("k1"), Nonce("k1")
	if a != b || len(a) != 25 || Nonce("k2") == a {
		t.Fatalf("Nonce: %q %q %q", a, b, Nonce("k2"))
	}
}

// BenchmarkPostRoundTrip is one hook call's cost on the socket: a new
// connection, the peer check, the request and its answer (the fake poster
// answers at once). It is what one request per connection costs against
// a framed stream.
func BenchmarkPostRoundTrip(b *testing.B) {
	dir, _ := os.MkdirTemp("", "relay")
	defer os.RemoveAll(dir)
	path := SocketPath(dir)
	f := &fake{}
	s, err := Listen(path, func(string) (chat.Poster, bool) { return f, true }, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	c := NewClient(path, "home", 0)
	m := chat.Message{Content: strings.Repeat("a reply of 2,000 characters ", 80)[:2000]}
	x := context.Background()
	b.ResetTimer()
	for b.Loop() {
		if _, err := c.PostOnce(x, "c", "n", m); err != nil {
			b.Fatal(err)
		}
	}
}
