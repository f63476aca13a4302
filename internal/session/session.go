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
	"time"

	"github.com/ccbridge/ccbridge/internal/claudehook"
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
)

// NotReadyError says Claude did not come up, with its last screen lines.
type NotReadyError struct {
	Waited time.Duration
	Screen string
}

func (e *NotReadyError) Error() string {
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

	StartTimeout   time.Duration
	ReceiptTimeout time.Duration
	// UserServers opens other tmux servers (the user's own, for taken-over
	// sessions); nil = real tmux.
	UserServers UserServers
}

// Manager runs sessions. Operations on one session are serialized by its
// own lock; different sessions proceed in parallel.
type Manager struct {
	opt      Options
	settings claudehook.Settings // the hooks; settingsFor adds a session's policy

	mu    sync.Mutex // guards locks and typed
	locks map[string]*sync.Mutex
	typed map[string]string // per session, the text last pasted, for PressEnter
}

// New returns a Manager. The hook settings go to each Claude inline on its
// command line, never through a file a tmp cleaner or another local user
// could replace.
func New(opt Options) (*Manager, error) {
	if opt.StartTimeout == 0 {
		opt.StartTimeout = opt.Config.Claude.StartTimeout.Duration
	}
	if opt.StartTimeout == 0 {
		opt.StartTimeout = config.DefaultStartTimeout
	}
	if opt.ReceiptTimeout == 0 {
		opt.ReceiptTimeout = DefaultReceiptTimeout
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	if opt.UserServers == nil {
		opt.UserServers = defaultUserServers
	}
	// Every pane operation goes through the wrapper, which sends a
	// taken-over pane's to the user's server (foreign.go).
	opt.Panes = &panes{own: opt.Panes, user: opt.UserServers}
	s := claudehook.BridgeSettings(opt.HookStop, opt.HookPretool, opt.Config.Claude.PromptTimeout.Duration)
	return &Manager{opt: opt, locks: map[string]*sync.Mutex{}, typed: map[string]string{}, settings: s}, nil
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

func (m *Manager) lock(key string) func() {
	m.mu.Lock()
	l, ok := m.locks[key]
	if !ok {
		l = &sync.Mutex{}
		m.locks[key] = l
	}
	m.mu.Unlock()
	l.Lock()
	return l.Unlock
}
