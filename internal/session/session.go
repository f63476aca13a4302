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
	// UserServers opens other tmux servers (the user's own, for taken-over
	// sessions); nil = real tmux.
	UserServers UserServers
}

// Manager runs sessions. Operations on one session are serialized by its
// own lock; different sessions proceed in parallel.
type Manager struct {
	opt      Options
	settings string // the hook settings, passed inline with --settings

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
	return &Manager{opt: opt, locks: map[string]*sync.Mutex{}, typed: map[string]string{}, settings: string(s.Inline())}, nil
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
	// Args are more Claude flags, after the configured ones. Plain leaves
	// out ccbridge's Discord system prompt (a front end that is not
	// Discord passes its own flags in Args).
	Args  []string
	Plain bool
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

// Ensure returns the session's live pane, starting Claude if none runs. A
// live pane tagged with the session's key is adopted even when the record
// does not name it (a daemon killed between creating it and recording it).
func (m *Manager) Ensure(ctx context.Context, t Target) (pane string, started bool, err error) {
	defer m.lock(t.Key)()
	rec, _ := m.opt.Store.Sessions.Get(t.Key)
	if rec.Socket != "" {
		// A pane of the user's, taken over: never a new Claude.
		pane, err := m.ensureForeign(ctx, t.Key, rec)
		return pane, false, err
	}
	panes, err := m.listPanes(ctx)
	if err != nil {
		return "", false, err
	}
	if p, ok := ours(panes, t.Key, rec.PaneID); ok {
		if p != rec.PaneID {
			if err := m.adopt(ctx, t.Key, p); err != nil {
				return "", false, err
			}
		}
		return p, false, nil
	}
	pane, err = m.start(ctx, t)
	return pane, err == nil, err
}

// listPanes lists the live panes; no tmux server means none.
func (m *Manager) listPanes(ctx context.Context) ([]tmux.Pane, error) {
	panes, err := m.opt.Panes.ListPanes(ctx)
	if errors.Is(err, tmux.ErrNoServer) {
		return nil, nil
	}
	return panes, err
}

// ours finds the session's live pane: the recorded one if it is alive and
// not tagged for another session (pane ids restart with the tmux server),
// else one tagged with the key.
func ours(panes []tmux.Pane, key, recorded string) (string, bool) {
	for _, p := range panes {
		if recorded != "" && p.ID == recorded && !p.Dead && (p.Tag == "" || p.Tag == key) {
			return p.ID, true
		}
	}
	for _, p := range panes {
		if p.Tag == key && !p.Dead {
			return p.ID, true
		}
	}
	return "", false
}

// adopt records pane as the session's.
func (m *Manager) adopt(ctx context.Context, key, pane string) error {
	m.opt.Log.Info("adopted a running Claude by its tag", "session", key, "pane", pane)
	_, err := m.opt.Store.Sessions.Update(ctx, key, func(s *state.Session) error { s.PaneID = pane; return nil })
	return err
}

func (m *Manager) alive(ctx context.Context, key, pane string) (bool, error) {
	panes, err := m.listPanes(ctx)
	if err != nil {
		return false, err
	}
	p, ok := ours(panes, key, pane)
	return ok && p == pane, nil
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
	if t.PermissionMode != "" {
		argv = append(argv, "--permission-mode", t.PermissionMode)
	}
	argv = append(argv, "--settings", m.settings)
	if !t.Plain {
		argv = append(argv, "--append-system-prompt", claudeSystemPrompt(outputs))
	}
	argv = append(argv, t.Args...)
	if t.Model != "" {
		argv = append(argv, "--model", t.Model)
	}
	if t.Resume != "" {
		argv = append(argv, "--resume", t.Resume)
		if m.forking(t) {
			argv = append(argv, "--fork-session")
		}
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
		s.PromptTimeout = cfg.Claude.PromptTimeout.Duration
		s.PaneID, s.Busy = "", false
		return nil
	}); err != nil {
		return "", err
	}
	window := t.Window
	if window == "" {
		window = t.Key
	}
	pane, err := m.opt.Panes.NewPane(ctx, tmux.PaneSpec{Session: t.TmuxSession, Window: window, Tag: t.Key, Dir: t.Dir, Env: env, Argv: argv, Width: paneWidth, Height: paneHeight})
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
	if rec.Socket != "" {
		p, err := m.foreignPane(ctx, rec)
		if errors.Is(err, ErrForeignGone) {
			return "", fmt.Errorf("%w: %w", ErrNoPane, err)
		}
		return p, err
	}
	alive, err := m.alive(ctx, key, rec.PaneID)
	if err != nil {
		return "", err
	}
	if !alive {
		return "", ErrNoPane
	}
	return rec.PaneID, nil
}

// Deliver types text into the session and submits it: never into an open
// dialog, after clearing whatever sits in the input box, as one bracketed
// paste, then Enter. It returns the time just before the paste, for
// WaitReceipt, and ErrDialogOpen when a dialog is (or comes) up instead of
// the input box.
func (m *Manager) Deliver(ctx context.Context, key, text string) (time.Time, error) {
	defer m.lock(key)()
	pane, err := m.pane(ctx, key)
	if err != nil {
		return time.Time{}, err
	}
	return m.submit(ctx, key, pane, text)
}

// inputGuard is what tmux itself checks immediately before every key and
// paste ccbridge sends on its own account: no dialog on the visible screen
// (see tmux.Guard). Enter, a digit or Shift+Tab sent into a dialog answers
// it ("1. Yes" is highlighted first).
var inputGuard = tmux.Guard{Without: dialogMarkers}

// pasteShow bounds the wait for pasted text to appear in the input box.
const pasteShow = 3 * time.Second

// submit is Deliver under the session lock. Each step is checked:
//
//  1. the screen shows the input box and no dialog;
//  2. C-u and the paste are sent only if tmux sees no dialog as it sends;
//  3. the screen is read again until the input box shows the text; a
//     dialog that opened meanwhile stops here, the text left in the hidden
//     box (the next attempt clears it with C-u);
//  4. Enter is sent only if tmux sees no dialog as it sends it.
//
// What remains is the time between Claude deciding to draw a dialog and
// its output reaching tmux: a few milliseconds in which Claude has changed
// state but the screen has not. Nothing outside Claude can close that.
func (m *Manager) submit(ctx context.Context, key, pane, text string) (time.Time, error) {
	screen, err := m.opt.Panes.Capture(ctx, pane, 0)
	if err != nil {
		return time.Time{}, err
	}
	if !InputBoxShown(screen) {
		return time.Time{}, ErrDialogOpen
	}
	// An interrupted prompt is put back into the input box; clear it so
	// the new text is not appended to it.
	if err := m.keyIf(ctx, pane, tmux.KeyClearLine); err != nil {
		return time.Time{}, err
	}
	before := time.Now()
	if err := m.opt.Panes.PasteTextIf(ctx, pane, inputGuard, text); err != nil {
		return time.Time{}, refused(err)
	}
	m.mu.Lock()
	m.typed[key] = text
	m.mu.Unlock()
	if err := m.waitTyped(ctx, key, pane, text); err != nil {
		return time.Time{}, err
	}
	if err := m.keyIf(ctx, pane, tmux.KeyEnter); err != nil {
		return time.Time{}, err
	}
	return before, nil
}

// waitTyped waits until the input box shows text. If it never does but the
// box is there with no dialog (a rendering the check does not know), the
// caller may still press Enter: the guard on that key stands.
func (m *Manager) waitTyped(ctx context.Context, key, pane, text string) error {
	deadline := time.Now().Add(pasteShow)
	for {
		screen, err := m.opt.Panes.Capture(ctx, pane, 0)
		if err != nil {
			return err
		}
		if InputHolds(screen, text) {
			return nil
		}
		if !InputBoxShown(screen) {
			m.opt.Log.Warn("a dialog opened while typing; Enter not pressed", "session", key)
			return ErrDialogOpen
		}
		if time.Now().After(deadline) {
			m.opt.Log.Warn("the pasted text did not show in the input box; pressing Enter anyway", "session", key)
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(typedPoll):
		}
	}
}

// typedPoll is how often the screen is read while waiting for a paste to show.
const typedPoll = 20 * time.Millisecond

// keyIf presses keys only if tmux sees no dialog as it sends them.
func (m *Manager) keyIf(ctx context.Context, pane string, keys ...tmux.Key) error {
	return refused(m.opt.Panes.SendKeysIf(ctx, pane, inputGuard, keys...))
}

// refused turns a guard's refusal into ErrDialogOpen.
func refused(err error) error {
	if errors.Is(err, tmux.ErrRefused) {
		return fmt.Errorf("%w: %w", ErrDialogOpen, err)
	}
	return err
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

// PressEnter presses Enter once more, for a message that got no receipt,
// and only while the input box still shows the text last pasted by
// Deliver (and no dialog is up): otherwise it returns ErrInputChanged or
// ErrDialogOpen and presses nothing.
func (m *Manager) PressEnter(ctx context.Context, key string) error {
	defer m.lock(key)()
	pane, err := m.pane(ctx, key)
	if err != nil {
		return err
	}
	m.mu.Lock()
	text := m.typed[key]
	m.mu.Unlock()
	screen, err := m.opt.Panes.Capture(ctx, pane, 0)
	if err != nil {
		return err
	}
	if !InputBoxShown(screen) {
		return ErrDialogOpen
	}
	if text == "" || !InputHolds(screen, text) {
		return ErrInputChanged
	}
	return m.keyIf(ctx, pane, tmux.KeyEnter)
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

// screenBudget is how many characters Screen returns at most: a chat
// message holds 2,000, and the code fence and a cut notice take a few.
const screenBudget = 1900

// Screen returns the session's screen as a person reads it on a phone:
// blank runs collapsed, at most lines lines, within screenBudget
// characters, keeping the input box or the dialog and what is above it.
func (m *Manager) Screen(ctx context.Context, key string, lines int) (string, error) {
	pane, err := m.pane(ctx, key)
	if err != nil {
		return "", err
	}
	screen, err := m.opt.Panes.Capture(ctx, pane, 0)
	if err != nil {
		return "", err
	}
	return Condense(screen, lines, screenBudget), nil
}

// modeCycle is the order Shift+Tab walks the permission modes in 2.1.328.
var modeCycle = []string{"default", "acceptEdits", "plan", "auto"}

// modeShow bounds the wait for the footer to show the mode a Shift+Tab chose.
const modeShow = 3 * time.Second

// SetMode switches a running session's permission mode with Shift+Tab,
// following Claude's footer: one press at a time, each only into the input
// box (never a dialog, checked by tmux as the key is sent), the next only
// after the footer changed, until it shows the mode. The footer, not a
// count of presses, says where the cycle is (2.1.328: manual → accept
// edits → plan → auto). bypassPermissions and dontAsk are not on that
// cycle: they need a restart.
func (m *Manager) SetMode(ctx context.Context, key, mode string) error {
	defer m.lock(key)()
	if !slices.Contains(modeCycle, mode) {
		return fmt.Errorf("switching to %s is not possible in a running session; start it with that mode in the config", mode)
	}
	pane, err := m.pane(ctx, key)
	if err != nil {
		return err
	}
	screen, err := m.waitScreen(ctx, pane, modeShow, func(s string) bool { return ModeShown(s) != "" || !InputBoxShown(s) })
	if err != nil {
		return fmt.Errorf("cannot read the permission mode in Claude's footer: %w", err)
	}
	shown := ModeShown(screen)
	if !slices.Contains(modeCycle, shown) && InputBoxShown(screen) {
		return fmt.Errorf("switching from %s to %s is not possible in a running session; start it with that mode in the config", shown, mode)
	}
	for presses := 0; shown != mode; presses++ {
		if !InputBoxShown(screen) {
			return ErrDialogOpen
		}
		if presses == len(modeCycle) {
			return fmt.Errorf("the footer never showed %s after Shift+Tab (it shows %s)", mode, shown)
		}
		if err := m.keyIf(ctx, pane, tmux.KeyShiftTab); err != nil {
			return err
		}
		prev := shown
		if screen, err = m.waitScreen(ctx, pane, modeShow, func(s string) bool { return ModeShown(s) != prev || !InputBoxShown(s) }); err != nil {
			return fmt.Errorf("the footer still shows %s after Shift+Tab: %w", prev, err)
		}
		shown = ModeShown(screen)
	}
	_, err = m.opt.Store.Sessions.Update(ctx, key, func(s *state.Session) error { s.PermissionMode, s.ModeSeen = mode, mode; return nil })
	return err
}

// errScreenWait says the screen never showed what was waited for.
var errScreenWait = errors.New("not on the screen in time")

// waitScreen reads the pane's visible screen until ok accepts it.
func (m *Manager) waitScreen(ctx context.Context, pane string, within time.Duration, ok func(string) bool) (string, error) {
	deadline := time.Now().Add(within)
	for {
		screen, err := m.opt.Panes.Capture(ctx, pane, 0)
		if err != nil {
			return "", err
		}
		if ok(screen) {
			return screen, nil
		}
		if time.Now().After(deadline) {
			return screen, errScreenWait
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(typedPoll):
		}
	}
}

// Reconcile runs at daemon start: sessions whose pane is alive are adopted
// as they are, live panes tagged with a session's key are adopted even if
// the record never named them (start writes the record, then creates the
// pane: a daemon killed in between leaves a record without it), and
// the other sessions are marked stopped.
func (m *Manager) Reconcile(ctx context.Context) (adopted, gone int, err error) {
	panes, err := m.listPanes(ctx)
	if err != nil {
		return 0, 0, err
	}
	all, err := m.opt.Store.Sessions.List()
	tagged := map[string]bool{}
	for _, p := range panes {
		if p.Tag != "" && !p.Dead {
			tagged[p.Tag] = true
		}
	}
	for key, s := range all {
		if s.Socket != "" {
			continue // a taken-over pane of the user's: checked on each use
		}
		if s.PaneID == "" && !tagged[key] {
			continue
		}
		if p, ok := ours(panes, key, s.PaneID); ok {
			adopted++
			if p != s.PaneID {
				if aerr := m.adopt(ctx, key, p); aerr != nil {
					err = errors.Join(err, aerr)
				}
				continue
			}
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

// keyRedraw bounds the wait for the screen to change after a person's key.
const keyRedraw = 2 * time.Second

// PressKeys presses keys given by name (as carried in a button) in the
// session's pane; names outside the driver's fixed set are refused there.
// These are a person's answers, sent as asked. It returns once the screen
// has changed (Claude redrew), or after keyRedraw, so a screen read next
// shows the key's effect even when Claude is slow to redraw.
func (m *Manager) PressKeys(ctx context.Context, key string, names ...string) error {
	keys := make([]tmux.Key, len(names))
	for i, n := range names {
		keys[i] = tmux.Key(n)
	}
	defer m.lock(key)()
	pane, err := m.pane(ctx, key)
	if err != nil {
		return err
	}
	before, err := m.opt.Panes.Capture(ctx, pane, 0)
	if err != nil {
		return err
	}
	if err := m.opt.Panes.SendKeys(ctx, pane, keys...); err != nil {
		return err
	}
	if _, err := m.waitScreen(ctx, pane, keyRedraw, func(s string) bool { return s != before }); err != nil && !errors.Is(err, errScreenWait) {
		return err
	}
	return nil
}

// SetModel switches the running session's model with Claude's own /model
// command and completes what Claude asks on the way: once a conversation
// is cached, Claude first asks "Switch model? … 1. Yes, switch to …", and
// ccbridge answers 1 (pressed only while that dialog is what tmux shows).
// It returns when Claude's answer is on the screen: "Set model to …" is
// success; "Kept model as …" or anything else is reported as an error.
func (m *Manager) SetModel(ctx context.Context, key, model string) error {
	unlock := m.lock(key)
	err := m.setModel(ctx, key, model)
	unlock()
	if err != nil {
		return err
	}
	_, err = m.opt.Store.Sessions.Update(ctx, key, func(s *state.Session) error { s.Model = model; return nil })
	return err
}

// switchDialog is the confirmation /model opens on a cached conversation.
var switchDialog = tmux.Guard{With: []string{"Switch model?", "Enter to confirm"}}

// modelAnswers are the lines Claude prints under a /model command.
var modelAnswers = []string{"Set model to ", "Kept model as ", "Couldn't switch model", "Model not found", "Invalid model"}

func (m *Manager) setModel(ctx context.Context, key, model string) error {
	pane, err := m.pane(ctx, key)
	if err != nil {
		return err
	}
	rec, err := m.opt.Store.Sessions.Get(key)
	if err != nil {
		return err
	}
	switches := rec.ModelSwitches
	cmd := "/model " + model
	// The echo is read only to say what Claude answered when no switch
	// comes; counting earlier echoes tells ours from an identical older one.
	seen := func() (int, string) {
		all, err := m.opt.Panes.Capture(ctx, pane, modelHistory)
		if err != nil {
			return 0, ""
		}
		return echoAnswer(all, cmd)
	}
	echoes, _ := seen()
	if _, err := m.submit(ctx, key, pane, cmd); err != nil {
		return err
	}
	deadline := time.Now().Add(modelConfirm)
	var pressed time.Time
	for {
		// Claude's PostModelSwitch hook says the switch happened; the
		// screen is read only for an answer that is not a switch ("Kept
		// model as …", an unknown model), so that it is reported at once.
		if rec, err := m.opt.Store.Sessions.Get(key); err == nil && rec.ModelSwitches > switches {
			if rec.SwitchRequested != model {
				return fmt.Errorf("claude switched to %q, not %s", rec.SwitchRequested, model)
			}
			return nil
		}
		if n, answer := seen(); n > echoes && answer != "" && !strings.HasPrefix(answer, "Set model to ") {
			return fmt.Errorf("the model is not %s: Claude says %q", model, answer)
		}
		screen, err := m.opt.Panes.Capture(ctx, pane, 0)
		if err != nil {
			return err
		}
		// A dialog draws before it takes keys: press again if it stays.
		if strings.Contains(screen, "Switch model?") && time.Since(pressed) > time.Second {
			if err := m.opt.Panes.SendKeysIf(ctx, pane, switchDialog, "1"); err != nil && !errors.Is(err, tmux.ErrRefused) {
				return err
			}
			pressed = time.Now()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no switch by Claude to /model %s within %s (no PostModelSwitch hook); check /screen", model, modelConfirm)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(readyPoll):
		}
	}
}

// modelHistory is how many lines above the screen are searched for /model's echo.
const modelHistory = 500

// echoAnswer counts the transcript lines echoing cmd ("❯ /model sonnet")
// and returns the answer line under the last one, if it has come.
func echoAnswer(screen, cmd string) (int, string) {
	lines := strings.Split(screen, "\n")
	n, last := 0, -1
	for i, l := range lines {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "❯") && strings.TrimSpace(strings.TrimPrefix(t, "❯")) == cmd {
			// The input box holds the command before Enter: only echoes
			// that are not the box (no rule right above) count.
			if i > 0 && isRule(lines[i-1]) {
				continue
			}
			n, last = n+1, i
		}
	}
	if last < 0 {
		return n, ""
	}
	for _, l := range lines[last+1 : min(len(lines), last+4)] {
		t := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "⎿"))
		for _, a := range modelAnswers {
			if strings.HasPrefix(t, a) {
				return n, t
			}
		}
	}
	return n, ""
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
	if rec, err := m.opt.Store.Sessions.Get(key); err == nil && rec.Socket != "" {
		return m.release(ctx, key, rec) // the user's pane: never /exit, never killed
	}
	pane, err := m.pane(ctx, key)
	if errors.Is(err, ErrNoPane) {
		return nil
	}
	if err != nil {
		return err
	}
	// /exit only where it goes into the input box (with a dialog up it
	// would answer the dialog); 2.1.328 asks nothing on /exit for sessions
	// ccbridge starts (no -w), so there is nothing to complete here.
	if _, err := m.submit(ctx, key, pane, "/exit"); err == nil {
		deadline := time.Now().Add(exitWait)
		for time.Now().Before(deadline) {
			if alive, err := m.alive(ctx, key, pane); err == nil && !alive {
				break
			}
			time.Sleep(readyPoll)
		}
	} else {
		m.opt.Log.Info("not typing /exit", "session", key, "err", err)
	}
	if err := m.opt.Panes.KillPane(ctx, pane); err != nil {
		return err
	}
	m.opt.Log.Info("stopped Claude", "session", key, "pane", pane)
	_, err = m.opt.Store.Sessions.Update(ctx, key, func(s *state.Session) error { s.PaneID, s.Busy = "", false; return nil })
	return err
}

// modelConfirm bounds the wait for Claude's answer to /model.
const modelConfirm = 10 * time.Second
