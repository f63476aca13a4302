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
	"slices"
	"strings"
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
	PasteText(ctx context.Context, pane, text string) error
	SendKeys(ctx context.Context, pane string, keys ...tmux.Key) error
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
)

// NotReadyError says Claude did not come up, with its last screen lines.
type NotReadyError struct {
	Waited time.Duration
	Screen string
}

func (e *NotReadyError) Error() string {
	return fmt.Sprintf("Claude did not show its input box within %s", e.Waited)
}

// Pane geometry for new sessions: narrower than 110 columns so Claude keeps
// its diff side panel closed.
const (
	paneWidth  = 100
	paneHeight = 50
)

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
}

// Manager runs sessions. Operations on one session are serialized by its
// own lock; different sessions proceed in parallel.
type Manager struct {
	opt      Options
	settings string // path of the --settings file

	mu    sync.Mutex // guards locks
	locks map[string]*sync.Mutex
}

// New writes the hook settings file and returns a Manager.
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
	m := &Manager{opt: opt, locks: map[string]*sync.Mutex{}, settings: opt.Store.Dir.ClaudeSettings()}
	s := claudehook.BridgeSettings(opt.HookStop, opt.HookPretool, opt.Config.Claude.PromptTimeout.Duration)
	if err := opt.Store.Dir.WriteFile(m.settings, s.JSON()); err != nil {
		return nil, fmt.Errorf("write claude settings: %w", err)
	}
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

// Target describes a session to run.
type Target struct {
	Key            string // CCBRIDGE_SESSION
	Window         string // tmux window name, for people who attach; default Key
	Server         string
	Project        string
	ChannelID      string
	ThreadID       string
	Dir            string
	Model          string
	PermissionMode string
	Progress       string
	TmuxSession    string
	// Resume is a Claude session id to continue (--resume); a Claude that
	// cannot resume it is started fresh.
	Resume string
	// Isolation "worktree" runs the session in its own git worktree.
	Isolation  string
	ThreadName string
}

// ProjectTarget describes the session of a project's channel.
func ProjectTarget(cfg *config.Config, srv config.Server, p config.Project) (Target, error) {
	dir, err := p.ProjectPath()
	if err != nil {
		return Target{}, err
	}
	mode := p.PermissionMode
	if mode == "" {
		mode = cfg.Claude.PermissionMode
	}
	return Target{Key: srv.Name + "-" + p.Name, Server: srv.Name, Project: p.Name, ChannelID: p.ChannelID, Dir: dir,
		Model: p.Model, PermissionMode: mode, Progress: p.Progress, TmuxSession: srv.TmuxSession}, nil
}

// Ensure returns the session's live pane, starting Claude if none runs.
func (m *Manager) Ensure(ctx context.Context, t Target) (pane string, started bool, err error) {
	defer m.lock(t.Key)()
	if rec, err := m.opt.Store.Sessions.Get(t.Key); err == nil && rec.PaneID != "" {
		if alive, err := m.alive(ctx, rec.PaneID); err != nil {
			return "", false, err
		} else if alive {
			return rec.PaneID, false, nil
		}
	}
	pane, err = m.start(ctx, t)
	return pane, err == nil, err
}

func (m *Manager) alive(ctx context.Context, pane string) (bool, error) {
	panes, err := m.opt.Panes.ListPanes(ctx)
	if errors.Is(err, tmux.ErrNoServer) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(panes, func(p tmux.Pane) bool { return p.ID == pane && !p.Dead }), nil
}

// claudeSystemPrompt tells Claude where to put files for Discord.
func claudeSystemPrompt(outputs string) string {
	return "You are being driven from Discord through ccbridge. To send the user a file, save it in " + outputs +
		" and write [DISCORD_ATTACH: <file name>] in your reply."
}

func (m *Manager) start(ctx context.Context, t Target) (string, error) {
	cfg := m.opt.Config
	if t.Isolation == "worktree" {
		if err := m.prepareWorktree(ctx, &t); err != nil {
			return "", fmt.Errorf("worktree: %w", err)
		}
	}
	if _, err := os.Stat(t.Dir); err != nil {
		return "", fmt.Errorf("project directory %s: %w", t.Dir, err)
	}
	outputs, err := m.opt.Store.Dir.Outputs(t.Key)
	if err != nil {
		return "", err
	}
	argv := append([]string{cfg.Claude.Command}, cfg.Claude.Args...)
	argv = append(argv, "--permission-mode", t.PermissionMode, "--settings", m.settings, "--append-system-prompt", claudeSystemPrompt(outputs))
	if t.Model != "" {
		argv = append(argv, "--model", t.Model)
	}
	if t.Resume != "" {
		argv = append(argv, "--resume", t.Resume)
	}
	env := map[string]string{}
	for k, v := range cfg.Claude.Env {
		env[k] = v
	}
	env[state.EnvSession] = t.Key
	env[state.EnvRuntimeDir] = m.opt.Store.Dir.Root()
	env["CCBRIDGE_OUTPUTS"] = outputs
	if cfg.Path != "" {
		if abs, err := filepath.Abs(cfg.Path); err == nil {
			env[config.EnvConfig] = abs
		}
	}
	// Record the session before Claude starts: its first hooks need it.
	if _, err := m.opt.Store.Sessions.Update(ctx, t.Key, func(s *state.Session) error {
		s.Server, s.Project, s.ChannelID, s.ThreadID, s.Cwd = t.Server, t.Project, t.ChannelID, t.ThreadID, t.Dir
		s.Model, s.PermissionMode, s.ModeSeen, s.Progress = t.Model, t.PermissionMode, t.PermissionMode, t.Progress
		s.PaneID, s.Busy = "", false
		return nil
	}); err != nil {
		return "", err
	}
	window := t.Window
	if window == "" {
		window = t.Key
	}
	pane, err := m.opt.Panes.NewPane(ctx, tmux.PaneSpec{Session: t.TmuxSession, Window: window, Dir: t.Dir, Env: env, Argv: argv, Width: paneWidth, Height: paneHeight})
	if err != nil {
		return "", fmt.Errorf("start Claude: %w", err)
	}
	if _, err := m.opt.Store.Sessions.Update(ctx, t.Key, func(s *state.Session) error { s.PaneID = pane; return nil }); err != nil {
		return "", err
	}
	m.opt.Log.Info("started Claude", "session", t.Key, "pane", pane, "dir", t.Dir, "mode", t.PermissionMode, "resume", t.Resume)
	if err := m.waitReady(ctx, pane); err != nil {
		if t.Resume != "" && errors.Is(err, errExited) {
			// The conversation is gone (another HOME, a deleted transcript):
			// a fresh one is better than none.
			m.opt.Log.Warn("could not resume; starting a fresh conversation", "session", t.Key, "claude_session", t.Resume)
			t.Resume = ""
			return m.start(ctx, t)
		}
		return pane, err
	}
	return pane, nil
}

// errExited marks a Claude that exited before showing its input box.
var errExited = errors.New("the Claude process exited at once")

func (m *Manager) waitReady(ctx context.Context, pane string) error {
	deadline := time.Now().Add(m.opt.StartTimeout)
	var screen string
	for {
		var err error
		screen, err = m.opt.Panes.Capture(ctx, pane, 0)
		if errors.Is(err, tmux.ErrPaneGone) {
			return fmt.Errorf("%w: %w", errExited, &NotReadyError{Waited: m.opt.StartTimeout, Screen: "(Claude exited at once: check [claude].command and args)"})
		}
		if err == nil && InputReady(screen) {
			return nil
		}
		if time.Now().After(deadline) {
			return &NotReadyError{Waited: m.opt.StartTimeout, Screen: LastLines(screen, 15)}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(readyPoll):
		}
	}
}

// pane returns a session's live pane or ErrNoPane.
func (m *Manager) pane(ctx context.Context, key string) (string, error) {
	rec, err := m.opt.Store.Sessions.Get(key)
	if errors.Is(err, state.ErrNotFound) || (err == nil && rec.PaneID == "") {
		return "", ErrNoPane
	}
	if err != nil {
		return "", err
	}
	alive, err := m.alive(ctx, rec.PaneID)
	if err != nil {
		return "", err
	}
	if !alive {
		return "", ErrNoPane
	}
	return rec.PaneID, nil
}

// Deliver types text into the session: never into an open dialog, after
// clearing whatever sits in the input box, as one bracketed paste, then
// Enter. It returns the time just before the paste, for WaitReceipt.
func (m *Manager) Deliver(ctx context.Context, key, text string) (time.Time, error) {
	defer m.lock(key)()
	pane, err := m.pane(ctx, key)
	if err != nil {
		return time.Time{}, err
	}
	screen, err := m.opt.Panes.Capture(ctx, pane, 0)
	if err != nil {
		return time.Time{}, err
	}
	if DialogOpen(screen) {
		return time.Time{}, ErrDialogOpen
	}
	// An interrupted prompt is put back into the input box; clear it so
	// the new text is not appended to it.
	if err := m.opt.Panes.SendKeys(ctx, pane, tmux.KeyClearLine); err != nil {
		return time.Time{}, err
	}
	before := time.Now()
	if err := m.opt.Panes.PasteText(ctx, pane, text); err != nil {
		return time.Time{}, err
	}
	if err := m.opt.Panes.SendKeys(ctx, pane, tmux.KeyEnter); err != nil {
		return time.Time{}, err
	}
	return before, nil
}

// WaitReceipt waits until Claude's UserPromptSubmit hook reports a prompt
// submitted after since that holds text.
func (m *Manager) WaitReceipt(ctx context.Context, key string, since time.Time, text string, timeout time.Duration) error {
	if timeout == 0 {
		timeout = m.opt.ReceiptTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	events, err := m.opt.Store.Sessions.Watch(ctx)
	if err != nil {
		return err
	}
	want := normalize(tmux.Sanitize(text))
	if len(want) > 200 {
		want = want[:200]
	}
	tick := time.NewTicker(time.Second) // events are hints; re-read regardless
	defer tick.Stop()
	for {
		if rec, err := m.opt.Store.Sessions.Get(key); err == nil {
			for _, p := range rec.Prompts {
				if p.NotBefore(since) && strings.Contains(normalize(p.Text), want) {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return ErrNoReceipt
		case <-events:
		case <-tick.C:
		}
	}
}

// normalize folds whitespace, so a prompt Claude wrapped or re-spaced still matches.
func normalize(s string) string { return strings.Join(strings.Fields(s), " ") }

// PressEnter presses Enter once more, for a message that got no receipt.
func (m *Manager) PressEnter(ctx context.Context, key string) error {
	return m.Keys(ctx, key, tmux.KeyEnter)
}

// Keys presses keys in the session's pane.
func (m *Manager) Keys(ctx context.Context, key string, keys ...tmux.Key) error {
	defer m.lock(key)()
	pane, err := m.pane(ctx, key)
	if err != nil {
		return err
	}
	return m.opt.Panes.SendKeys(ctx, pane, keys...)
}

// Interrupt timing: how long to wait for the footer to drop "esc to
// interrupt" before pressing Escape again. Under load a single Escape was
// seen to be lost in the e2e tier. A second Escape is pressed only while the
// turn still runs: on an idle screen Esc Esc opens Claude's rewind menu.
const (
	interruptCheck   = 1500 * time.Millisecond
	interruptPresses = 3
)

// Interrupt presses Escape until the turn stops. An interrupted turn fires
// no Stop hook, so the busy state is cleared here.
func (m *Manager) Interrupt(ctx context.Context, key string) error {
	defer m.lock(key)()
	pane, err := m.pane(ctx, key)
	if err != nil {
		return err
	}
	for range interruptPresses {
		if err := m.opt.Panes.SendKeys(ctx, pane, tmux.KeyEscape); err != nil {
			return err
		}
		if !m.stillBusy(ctx, pane, interruptCheck) {
			break
		}
		m.opt.Log.Warn("turn still running after Escape; pressing it again", "session", key)
	}
	_, err = m.opt.Store.Sessions.Update(ctx, key, func(s *state.Session) error { s.Busy = false; return nil })
	return err
}

// stillBusy polls the footer until it no longer shows a running turn.
func (m *Manager) stillBusy(ctx context.Context, pane string, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for {
		screen, err := m.opt.Panes.Capture(ctx, pane, 0)
		if err != nil || !Busy(screen) {
			return false
		}
		if time.Now().After(deadline) {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(readyPoll):
		}
	}
}

// Screen returns the last lines of the session's pane.
func (m *Manager) Screen(ctx context.Context, key string, lines int) (string, error) {
	pane, err := m.pane(ctx, key)
	if err != nil {
		return "", err
	}
	screen, err := m.opt.Panes.Capture(ctx, pane, 0)
	if err != nil {
		return "", err
	}
	return LastLines(screen, lines), nil
}

// modeCycle is the order Shift+Tab walks the permission modes in 2.1.328.
var modeCycle = []string{"default", "acceptEdits", "plan", "auto"}

// SetMode switches a running session's permission mode with Shift+Tab.
// bypassPermissions and dontAsk are not on that cycle: they need a restart.
func (m *Manager) SetMode(ctx context.Context, key, mode string) error {
	rec, err := m.opt.Store.Sessions.Get(key)
	if err != nil {
		return ErrNoPane
	}
	cur := rec.ModeSeen
	if cur == "" {
		cur = rec.PermissionMode
	}
	from, to := slices.Index(modeCycle, cur), slices.Index(modeCycle, mode)
	if from < 0 || to < 0 {
		return fmt.Errorf("switching from %s to %s is not possible in a running session; start it with that mode in the config", cur, mode)
	}
	presses := (to - from + len(modeCycle)) % len(modeCycle)
	keys := slices.Repeat([]tmux.Key{tmux.KeyShiftTab}, presses)
	if len(keys) > 0 {
		if err := m.Keys(ctx, key, keys...); err != nil {
			return err
		}
	}
	_, err = m.opt.Store.Sessions.Update(ctx, key, func(s *state.Session) error { s.PermissionMode, s.ModeSeen = mode, mode; return nil })
	return err
}

// Reconcile runs at daemon start: sessions whose pane is alive are adopted
// as they are; the others are marked stopped.
func (m *Manager) Reconcile(ctx context.Context) (adopted, gone int, err error) {
	panes, err := m.opt.Panes.ListPanes(ctx)
	if err != nil && !errors.Is(err, tmux.ErrNoServer) {
		return 0, 0, err
	}
	live := map[string]bool{}
	for _, p := range panes {
		if !p.Dead {
			live[p.ID] = true
		}
	}
	all, err := m.opt.Store.Sessions.List()
	for key, s := range all {
		if s.PaneID == "" {
			continue
		}
		if live[s.PaneID] {
			adopted++
			m.opt.Log.Info("adopted running session", "session", key, "pane", s.PaneID)
			continue
		}
		gone++
		if _, uerr := m.opt.Store.Sessions.Update(ctx, key, func(s *state.Session) error { s.PaneID, s.Busy = "", false; return nil }); uerr != nil {
			err = errors.Join(err, uerr)
		}
	}
	return adopted, gone, err
}

// Status is what /status shows.
type Status struct {
	State   string // running, busy, waiting on a prompt, stopped
	Session state.Session
}

// Status reports a session's state.
func (m *Manager) Status(ctx context.Context, key string) (Status, error) {
	rec, err := m.opt.Store.Sessions.Get(key)
	if errors.Is(err, state.ErrNotFound) {
		return Status{State: "stopped"}, nil
	}
	if err != nil {
		return Status{}, err
	}
	st := Status{State: "stopped", Session: rec}
	pane, err := m.pane(ctx, key)
	if err != nil {
		return st, nil
	}
	st.State = "idle"
	if screen, err := m.opt.Panes.Capture(ctx, pane, 0); err == nil && DialogOpen(screen) {
		st.State = "waiting on a prompt"
	} else if rec.Busy {
		st.State = "busy"
	}
	return st, nil
}

// PressKeys presses keys given by name (as carried in a button) in the
// session's pane; names outside the driver's fixed set are refused there.
func (m *Manager) PressKeys(ctx context.Context, key string, names ...string) error {
	keys := make([]tmux.Key, len(names))
	for i, n := range names {
		keys[i] = tmux.Key(n)
	}
	return m.Keys(ctx, key, keys...)
}

// SetModel switches the running session's model with Claude's own /model command.
func (m *Manager) SetModel(ctx context.Context, key, model string) error {
	if _, err := m.Deliver(ctx, key, "/model "+model); err != nil {
		return err
	}
	// /model is a local command: no hook reports it, so its confirmation
	// is read off the screen (the one place state is scraped; T4). Until it
	// shows, a message sent next could still go to the old model (seen in CI).
	if !m.screenShows(ctx, key, "Set model to", modelConfirm) {
		return fmt.Errorf("no confirmation from Claude of the switch to %s within %s; check /screen", model, modelConfirm)
	}
	_, err := m.opt.Store.Sessions.Update(ctx, key, func(s *state.Session) error { s.Model = model; return nil })
	return err
}

// ThreadTarget describes the session of a thread under a project channel.
// Settings resolve in three layers: the thread's own [[servers.projects.threads]]
// entry, then the project's [servers.projects.thread] defaults, then the
// project; what was changed from Discord (/mode, /model) comes on top.
func ThreadTarget(cfg *config.Config, srv config.Server, p config.Project, threadID string, reg state.Registered) (Target, error) {
	t, err := ProjectTarget(cfg, srv, p)
	if err != nil {
		return Target{}, err
	}
	t.Key = ThreadKey(srv.Name, p.Name, threadID)
	t.ThreadID = threadID
	pick := func(dst *string, layers ...string) {
		for _, v := range layers {
			if v != "" {
				*dst = v
				return
			}
		}
	}
	var entry config.Thread
	for _, th := range p.Threads {
		if th.ThreadID == threadID {
			entry = th
		}
	}
	t.Isolation = Isolation(p, threadID)
	pick(&t.ThreadName, reg.ThreadName, entry.Name)
	t.Window = windowName(p.Name, t.ThreadName, threadID)
	pick(&t.Model, reg.Model, entry.Model, p.Thread.Model, p.Model)
	pick(&t.PermissionMode, reg.PermissionMode, entry.PermissionMode, p.Thread.PermissionMode, p.PermissionMode, cfg.Claude.PermissionMode)
	if entry.Path != "" {
		dir, err := config.ExpandHome(entry.Path)
		if err != nil {
			return Target{}, err
		}
		t.Dir = dir
	}
	return t, nil
}

// windowName makes a thread's tmux window readable: project/thread name.
func windowName(project, thread, threadID string) string {
	if thread == "" {
		thread = threadID
	}
	name := strings.NewReplacer(".", "-", ":", "-").Replace(project + "/" + thread)
	if r := []rune(name); len(r) > 40 {
		name = string(r[:40])
	}
	return name
}

// ThreadKey names the session of a thread.
func ThreadKey(server, project, threadID string) string {
	return fmt.Sprintf("%s-%s-t%s", server, project, threadID)
}

// Isolation is how a thread's session works: "none" or "worktree".
func Isolation(p config.Project, threadID string) string {
	for _, th := range p.Threads {
		if th.ThreadID == threadID && th.Isolation != "" {
			return th.Isolation
		}
	}
	return p.Thread.Isolation
}

// exitWait is how long a session gets to end after /exit before its pane is killed.
const exitWait = 5 * time.Second

// Stop ends a session gracefully: /exit (Claude saves its state and its
// SessionEnd hook runs), then the pane is killed if it is still there.
func (m *Manager) Stop(ctx context.Context, key string) error {
	defer m.lock(key)()
	pane, err := m.pane(ctx, key)
	if errors.Is(err, ErrNoPane) {
		return nil
	}
	if err != nil {
		return err
	}
	if screen, err := m.opt.Panes.Capture(ctx, pane, 0); err == nil && !DialogOpen(screen) {
		_ = m.opt.Panes.SendKeys(ctx, pane, tmux.KeyClearLine)
		_ = m.opt.Panes.PasteText(ctx, pane, "/exit")
		_ = m.opt.Panes.SendKeys(ctx, pane, tmux.KeyEnter)
		deadline := time.Now().Add(exitWait)
		for time.Now().Before(deadline) {
			if alive, err := m.alive(ctx, pane); err == nil && !alive {
				break
			}
			time.Sleep(readyPoll)
		}
	}
	if err := m.opt.Panes.KillPane(ctx, pane); err != nil {
		return err
	}
	m.opt.Log.Info("stopped Claude", "session", key, "pane", pane)
	_, err = m.opt.Store.Sessions.Update(ctx, key, func(s *state.Session) error { s.PaneID, s.Busy = "", false; return nil })
	return err
}

// modelConfirm bounds the wait for Claude's "Set model to" line.
const modelConfirm = 10 * time.Second

// screenShows polls the session's screen until it contains want.
func (m *Manager) screenShows(ctx context.Context, key, want string, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for {
		if screen, err := m.Screen(ctx, key, 200); err == nil && strings.Contains(screen, want) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(readyPoll):
		}
	}
}
