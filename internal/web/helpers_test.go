package web

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/policy"
)

type fakeSessions struct {
	mu   sync.Mutex
	list []Session
}

func (f *fakeSessions) Session(key string) (Session, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.list {
		if s.Key == key {
			return s, true
		}
	}
	return Session{}, false
}

func (f *fakeSessions) List(server string) []Session {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Session
	for _, s := range f.list {
		if s.Server == server {
			out = append(out, s)
		}
	}
	return out
}

type fakeDiffs struct{ d Diff }

func (f fakeDiffs) Diff(context.Context, Session) (Diff, error) { return f.d, nil }

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// env is a handler over one session "proj" (server "home") working in
// dir, with a transcript, a policy denying Read(secrets/**) and a token
// file inside the folder, plus a second server's session.
type env struct {
	h          *Handler
	clock      *clock
	dir        string
	transcript string
	token      string // a private file inside the session's folder
	logs       *bytes.Buffer
	sessions   *fakeSessions
}

func newEnv(t testing.TB, mod ...func(*Options)) *env {
	t.Helper()
	root := t.TempDir()
	e := &env{clock: &clock{now: time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)}, logs: &bytes.Buffer{}}
	e.dir = filepath.Join(root, "work")
	e.transcript = filepath.Join(root, "claude", "t.jsonl")
	e.token = filepath.Join(e.dir, "bot.token")
	for _, d := range []string{e.dir, filepath.Dir(e.transcript), filepath.Join(e.dir, "secrets"), filepath.Join(e.dir, "src")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write(t, e.token, "token-value")
	write(t, filepath.Join(e.dir, "secrets", "prod.key"), "private")
	write(t, filepath.Join(e.dir, "src", "main.go"), "package main\n\nfunc main() {}\n")
	write(t, e.transcript, "")
	e.sessions = &fakeSessions{list: []Session{
		{Key: "proj", Server: "home", Name: "proj", Dir: e.dir, Transcript: e.transcript, Branch: "ccbridge/proj-1", Status: "idle"},
		{Key: "other", Server: "work", Name: "other", Dir: e.dir, Transcript: e.transcript},
	}}
	deny, err := policy.New(nil, []string{"Read(secrets/**)"})
	if err != nil {
		t.Fatal(err)
	}
	opt := Options{
		Sessions:   e.sessions,
		Diffs:      fakeDiffs{},
		StateDir:   filepath.Join(root, "state"),
		Redact:     func(s string) string { return strings.ReplaceAll(s, "hunter2hunter2", "[redacted]") },
		ReadDenied: PolicyReadDenied(func(Session) policy.Set { return deny }, root),
		Private:    []string{e.token},
		Listen:     "127.0.0.1:7878",
		Now:        e.clock.Now,
		Logger:     slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	for _, m := range mod {
		m(&opt)
	}
	h, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	e.h = h
	return e
}

func write(t testing.TB, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

// path is the path of a link (what a browser requests).
func (e *env) path(scope Scope) string {
	l := e.h.Link(scope, 0)
	return strings.TrimPrefix(l, "http://127.0.0.1:7878")
}

func (e *env) get(t *testing.T, target string) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
	return w
}

func body(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	b, _ := io.ReadAll(w.Result().Body)
	return string(b)
}
