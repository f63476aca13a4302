// Package session runs Claude Code sessions: one per project channel (and,
// later, per thread), each in its own tmux window. It starts Claude with
// the bridge's hooks, delivers text safely, waits for delivery receipts,
// and re-adopts live panes after a daemon restart. It knows nothing about
// Discord: sessions are addressed by key and described by plain ids.
package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/execx"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/tmux"
	"github.com/ccbridge/ccbridge/internal/worktree"
)

// Panes is the part of the tmux driver sessions use.
type Panes interface {
	NewPane(ctx context.Context, spec tmux.PaneSpec) (string, error)
	SendKeys(ctx context.Context, pane string, keys ...tmux.Key) error
	PasteTextIf(ctx context.Context, pane string, g tmux.Guard, text string) error
	SendKeysIf(ctx context.Context, pane string, g tmux.Guard, keys ...tmux.Key) error
	Capture(ctx context.Context, pane string, history int) (string, error)
	ListPanes(ctx context.Context) ([]tmux.Pane, error)
	KillPane(ctx context.Context, pane string) error
	// LetGoOnExit ends PaneSpec.KeepOnExit once Claude is up.
	LetGoOnExit(ctx context.Context, pane string) error
}

// Trees is the part of the worktree package sessions use.
type Trees interface {
	Root(ctx context.Context, dir string) (string, error)
	Head(ctx context.Context, repo string) (string, error)
	Add(ctx context.Context, repo, path, branch, base string) error
	Inspect(ctx context.Context, path, base string) (worktree.Changes, error)
	Remove(ctx context.Context, repo, path, branch, base string, force bool) error
}

// Errors callers turn into messages for people.
var (
	ErrDialogOpen = errors.New("a dialog is open in Claude's terminal")
	ErrNoPane     = errors.New("no Claude session is running")
	ErrNoReceipt  = errors.New("no delivery receipt from Claude")
	// ErrInputChanged says Enter was not pressed again because Claude's
	// input box no longer holds the message.
	ErrInputChanged = errors.New("the input box no longer holds the message")
	// ErrDraft says a taken-over terminal's input box holds text its
	// person typed: nothing was typed over it.
	ErrDraft = errors.New("the terminal has a draft in its input box; not typed")
)

// NotReadyError says Claude did not come up, with its last screen lines.
type NotReadyError struct {
	Waited time.Duration
	Screen string
	Exited bool // Claude exited before showing its input box
	// Dialog: a dialog at start waited Waited (the prompt timeout) for
	// an answer that never came.
	Dialog bool
}

func (e *NotReadyError) Error() string {
	if e.Exited {
		return "Claude exited before showing its input box"
	}
	if e.Dialog {
		return fmt.Sprintf("Claude's dialog at start was not answered within %s", e.Waited)
	}
	return fmt.Sprintf("Claude did not show its input box within %s", e.Waited)
}

// Timing. Claude Code takes 1–3 s to start here; the start deadline is
// [claude].start_timeout.
const (
	DefaultReceiptTimeout = 15 * time.Second
	readyPoll             = 150 * time.Millisecond
)

// Options configure a Manager.
type Options struct {
	Config      *config.Config
	Store       *state.Store
	Registry    *state.Registry
	Trees       Trees
	Panes       Panes
	Log         *slog.Logger
	HookStop    string // absolute path of ccbridge-hook-stop
	HookPretool string // absolute path of ccbridge-hook-pretool
	// Hooks runs a hook on an agent's behalf where the agent fires none
	// (turnerror.go); nil = execx.Exec.
	Hooks execx.Runner

	StartTimeout   time.Duration
	ReceiptTimeout time.Duration
	// UserServers opens other tmux servers (the user's own, for taken-over
	// sessions); nil = real tmux.
	UserServers UserServers
	// FindProgram checks that a program can be run with a PATH; nil = a
	// look in the file system. Tests whose panes are fakes replace it.
	FindProgram func(name, path string) error
}

// Manager runs sessions. Operations on one session are serialized by its
// own lock; different sessions proceed in parallel.
type Manager struct {
	opt  Options
	live atomic.Pointer[conf] // the config in use (reconfigure.go)

	mu    sync.Mutex // guards locks, typed, listeners and shown
	locks map[string]*sync.Mutex
	typed map[string]string // per session, the text last pasted, for PressEnter
	// Per session, who is told about a dialog no hook reports, and the
	// last one told (dialog.go).
	listeners map[string]func(Dialog)
	shown     map[string]string
}

// New returns a Manager. The hook settings go to each Claude inline on its
// command line, never through a file a tmp cleaner or another local user
// could replace.
func New(opt Options) (*Manager, error) {
	if opt.ReceiptTimeout == 0 {
		opt.ReceiptTimeout = DefaultReceiptTimeout
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	if opt.UserServers == nil {
		opt.UserServers = defaultUserServers
	}
	if opt.FindProgram == nil {
		opt.FindProgram = findProgram
	}
	if opt.Hooks == nil {
		opt.Hooks = execx.Exec{}
	}
	// Every pane operation goes through the wrapper, which sends a
	// taken-over pane's to the user's server (foreign.go).
	opt.Panes = &panes{own: opt.Panes, user: opt.UserServers}
	m := &Manager{opt: opt, locks: map[string]*sync.Mutex{}, typed: map[string]string{},
		listeners: map[string]func(Dialog){}, shown: map[string]string{}}
	m.Reconfigure(opt.Config)
	return m, nil
}

// HookBinaries finds the hook programs next to the running executable,
// else on PATH.
func HookBinaries() (stop, pretool string, err error) {
	find := func(name string) (string, error) {
		if exe, err := os.Executable(); err == nil {
			p := filepath.Join(filepath.Dir(exe), name)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				return p, nil
			}
		}
		p, err := execx.LookPath(name)
		if err != nil {
			return "", fmt.Errorf("%s not found next to ccbridge or on PATH (run ./install.sh)", name)
		}
		return filepath.Abs(p)
	}
	if stop, err = find("ccbridge-hook-stop"); err != nil {
		return "", "", err
	}
	pretool, err = find("ccbridge-hook-pretool")
	return stop, pretool, err
}

// lock serializes operations on one session: within this process (a mutex)
// and across processes (a flock in the runtime dir, see state.LockPane), so
// the daemon and `ccbridge mcp` never type into one pane at once. Inside a
// Send that already holds the session (see hold), it takes nothing more.
func (m *Manager) lock(ctx context.Context, key string) (func(), error) {
	if h := heldIn(ctx); h != nil && h.has(key) {
		return func() {}, nil
	}
	l := m.mutex(key)
	l.Lock()
	unlockPane, err := m.opt.Store.Dir.LockPane(ctx, key)
	if err != nil {
		l.Unlock()
		return nil, err
	}
	return func() { unlockPane(); l.Unlock() }, nil
}

// paneTry is how long tryLock waits for the pane's flock.
const paneTry = 10 * time.Millisecond

// tryLock takes the session's lock, as lock does, only if no one holds it:
// ok is false while another action is in flight in the session (a
// delivery, /model answering its own dialog, a person's key), here or in
// another process.
func (m *Manager) tryLock(ctx context.Context, key string) (unlock func(), ok bool) {
	if h := heldIn(ctx); h != nil && h.has(key) {
		return func() {}, true
	}
	l := m.mutex(key)
	if !l.TryLock() {
		return nil, false
	}
	tctx, cancel := context.WithTimeout(ctx, paneTry)
	defer cancel()
	unlockPane, err := m.opt.Store.Dir.LockPane(tctx, key)
	if err != nil {
		l.Unlock()
		return nil, false
	}
	return func() { unlockPane(); l.Unlock() }, true
}

// mutex returns the in-process lock of a session.
func (m *Manager) mutex(key string) *sync.Mutex {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.locks[key]
	if !ok {
		l = &sync.Mutex{}
		m.locks[key] = l
	}
	return l
}

// held is the sessions a Send holds from its paste through Enter to
// Claude's receipt (and a second Enter): nothing another typist sends can
// come between them.
type held struct {
	mu    sync.Mutex
	locks map[string]func()
}

type heldKey struct{}

// hold returns a context in which the session locks Deliver takes are kept
// until release, for Send.
func hold(ctx context.Context) (context.Context, func()) {
	h := &held{locks: map[string]func(){}}
	return context.WithValue(ctx, heldKey{}, h), func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		for k, unlock := range h.locks {
			unlock()
			delete(h.locks, k)
		}
	}
}

func heldIn(ctx context.Context) *held {
	h, _ := ctx.Value(heldKey{}).(*held)
	return h
}

func (h *held) has(key string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.locks[key]
	return ok
}

// keep hands a session's lock to the Send in ctx, if there is one; it
// reports whether it did (the caller then must not unlock).
func keep(ctx context.Context, key string, unlock func()) bool {
	h := heldIn(ctx)
	if h == nil {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.locks[key]; !ok {
		h.locks[key] = unlock
	}
	return true
}

// lockedPane takes the session's locks (this process's and the pane's
// flock) and returns its pane; unlock releases both.
func (m *Manager) lockedPane(ctx context.Context, key string) (pane string, unlock func(), err error) {
	if unlock, err = m.lock(ctx, key); err != nil {
		return "", nil, err
	}
	if pane, err = m.pane(ctx, key); err != nil {
		unlock()
		return "", nil, err
	}
	return pane, unlock, nil
}
