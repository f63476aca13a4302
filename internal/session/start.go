package session

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ccbridge/ccbridge/internal/agent"
	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/tmux"
)

// Pane geometry for new sessions: narrower than 110 columns so Claude keeps
// its diff side panel closed.
const (
	paneWidth  = 100
	paneHeight = 50
)

// Ensure returns the session's live pane, starting Claude if none runs. A
// live pane tagged with the session's key is adopted even when the record
// does not name it (a daemon killed between creating it and recording it).
//
// A Claude it starts is waited for (until its input box shows) without the
// session's lock: a dialog at start is the person's to answer, through
// AnswerDialog, which takes it.
func (m *Manager) Ensure(ctx context.Context, t Target) (pane string, started bool, err error) {
	m.listen(t)
	pane, started, err = m.ensure(ctx, t)
	if err != nil || !started {
		return pane, false, err
	}
	if err := m.waitReady(ctx, t, pane); err != nil {
		if t.Resume != "" && errors.Is(err, errExited) {
			// The conversation is gone (another HOME, a deleted transcript):
			// a fresh one is better than none.
			m.opt.Log.Warn("could not resume; starting a fresh conversation", "session", t.Key, "claude_session", t.Resume)
			t.Resume = ""
			return m.Ensure(ctx, t)
		}
		return pane, false, err
	}
	return pane, true, nil
}

// ensure is Ensure under the session's lock, up to a new pane.
func (m *Manager) ensure(ctx context.Context, t Target) (pane string, started bool, err error) {
	unlock, err := m.lock(ctx, t.Key)
	if err != nil {
		return "", false, err
	}
	defer unlock()
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

// claudeSystemPrompt tells the agent (Claude, Codex) where to put files for
// Discord.
func claudeSystemPrompt(outputs string) string {
	return "You are being driven from Discord through ccbridge. To send the user a file, save it in " + outputs +
		" and write [DISCORD_ATTACH: <file name>] in your reply."
}

func (m *Manager) start(ctx context.Context, t Target) (string, error) {
	cfg := m.config()
	if t.Isolation == "worktree" {
		if err := m.prepareWorktree(ctx, &t); err != nil {
			return "", fmt.Errorf("worktree: %w", err)
		}
	}
	if _, err := os.Stat(t.Dir); err != nil {
		return "", fmt.Errorf("project directory %s: %w", t.Dir, err)
	}
	a := m.agentFor(t.Agent) // agents.go
	// What would make the agent exit at once is named now, not after the
	// start timeout.
	if err := m.checkProgram(a); err != nil {
		return "", err
	}
	spec := agent.Spec{Model: t.Model, Resume: t.Resume, StopHook: m.opt.HookStop, PreToolHook: m.opt.HookPretool,
		PromptTimeout: cfg.Claude.PromptTimeout.Duration}
	if a.Name() == config.AgentClaude {
		if err := checkMode(t.PermissionMode); err != nil {
			return "", err
		}
		spec.PermissionMode, spec.Settings, spec.Args, spec.Fork = t.PermissionMode, m.settingsFor(t), t.Args, t.Resume != "" && m.forking(t) // policy.go
	} else {
		if err := claudeFlags(a, t.Args); err != nil {
			return "", err
		}
		if m.forking(t) {
			// Only Claude Code starts on a copy; resuming instead would
			// put a second session on the original conversation.
			_, _, title := a.Program()
			return "", fmt.Errorf("%s cannot fork a conversation: %w", title, ErrNotWithAgent)
		}
		// Claude's permission modes do not apply: the agent's own config
		// (approval policy, sandbox) does.
		t.PermissionMode = ""
		// Nor are Claude Code's deny rules on ccbridge's own files: the
		// policy hook refuses the calls that name them (SessionPolicy.Protect).
		sp, own := m.sessionPolicy(t)
		sp.Protect = own
		spec.Rules = sp.Arg()
	}
	outputs, err := m.opt.Store.Dir.Outputs(t.Key)
	if err != nil {
		return "", err
	}
	spec.Outputs = outputs
	if !t.Plain {
		spec.SystemPrompt = claudeSystemPrompt(outputs)
	}
	argv := a.Argv(spec)
	env := maps.Clone(a.Env())
	if env == nil {
		env = map[string]string{}
	}
	return m.launch(ctx, t, argv, env, outputs)
}

// launch records the session and starts its pane with argv and env (the
// agent's own) plus what ccbridge's hooks read.
func (m *Manager) launch(ctx context.Context, t Target, argv []string, env map[string]string, outputs string) (string, error) {
	cfg := m.config()
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
		s.Agent = t.Agent
		if t.Agent == config.AgentClaude {
			s.Agent = ""
		}
		return nil
	}); err != nil {
		return "", err
	}
	window := t.Window
	if window == "" {
		window = t.Key
	}
	pane, err := m.opt.Panes.NewPane(ctx, tmux.PaneSpec{Session: t.TmuxSession, Window: window, Tag: t.Key, Dir: t.Dir, Env: env, Argv: argv,
		Width: paneWidth, Height: paneHeight, KeepOnExit: true}) // until it is up: see waitReady
	if err != nil {
		return "", fmt.Errorf("start Claude: %w", err)
	}
	if _, err := m.opt.Store.Sessions.Update(ctx, t.Key, func(s *state.Session) error { s.PaneID = pane; return nil }); err != nil {
		return "", err
	}
	m.opt.Log.Info("started Claude", "session", t.Key, "pane", pane, "dir", t.Dir, "mode", t.PermissionMode, "resume", t.Resume, "agent", t.Agent)
	return pane, nil
}

// errExited marks a Claude that exited before showing its input box.
var errExited = errors.New("the Claude process exited at once")

// waitReady waits for Claude's input box. A dialog on the way (one no hook
// reports, see Dialog) is handed to t.OnDialog once its screen has
// settled, never answered here; while one is shown the start timeout does
// not run (the person may take a while), only the prompt timeout.
//
// The pane is kept when Claude exits (PaneSpec.KeepOnExit), so an early
// exit is reported with what Claude printed (its own "error: unknown
// option …"), which a pane gone at once would take with it; once Claude is
// up, or left running after the start timeout, the pane is let go, and
// closes when Claude exits.
func (m *Manager) waitReady(ctx context.Context, t Target, pane string) (err error) {
	defer func() {
		if errors.Is(err, errExited) {
			return // no pane left
		}
		if lerr := m.opt.Panes.LetGoOnExit(context.WithoutCancel(ctx), pane); lerr != nil && !errors.Is(lerr, tmux.ErrPaneGone) {
			m.opt.Log.Warn("Claude's pane stays open when Claude exits", "session", t.Key, "pane", pane, "err", lerr)
		}
	}()
	scr, err := m.agentOf(t.Key)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(m.startTimeout())
	// The prompt timeout bounds the wait for a person from the first
	// dialog on; before one shows, only the start timeout runs.
	var dialogDeadline time.Time
	var screen, shown string
	var settled, deadChecked time.Time
	for {
		now, err := m.opt.Panes.Capture(ctx, pane, 0)
		// A pane whose program exits is gone, and so is the tmux server
		// when it was its only pane.
		if errors.Is(err, tmux.ErrPaneGone) || errors.Is(err, tmux.ErrNoServer) {
			hint := m.exitHint(screen)
			if shown != "" {
				hint = "Claude exited after its dialog was answered (\"No, exit\" ends it)."
			}
			return fmt.Errorf("%w: %w", errExited, &NotReadyError{Waited: m.startTimeout(), Exited: true, Screen: hint})
		}
		dialog := false
		if err == nil {
			if now != screen {
				settled = time.Now()
			}
			screen = now
			if scr.InputReady(screen) {
				return nil
			}
			// tmux's notice says the program died; a user's tmux.conf may
			// reword it, so the pane list is asked every second too.
			if strings.Contains(screen, tmux.DeadNotice) || time.Since(deadChecked) >= time.Second {
				deadChecked = time.Now()
				if last, dead := m.lastWords(ctx, pane); dead {
					hint := last
					switch {
					case shown != "":
						hint = "Claude exited after its dialog was answered (\"No, exit\" ends it)."
					case hint == "":
						hint = m.exitHint("")
					}
					return fmt.Errorf("%w: %w", errExited, &NotReadyError{Waited: m.startTimeout(), Exited: true, Screen: hint})
				}
			}
			var d Dialog
			d, dialog = parseDialog(screen, scr)
			if dialog && time.Since(settled) >= dialogSettle && d.Hash != shown {
				shown = d.Hash
				m.showDialog(t.Key, d)
			}
		}
		if dialog && t.OnDialog != nil {
			deadline = time.Now().Add(m.startTimeout())
			if dialogDeadline.IsZero() {
				dialogDeadline = time.Now().Add(m.dialogWait())
			}
		}
		if !dialogDeadline.IsZero() && time.Now().After(dialogDeadline) {
			return &NotReadyError{Waited: m.dialogWait(), Dialog: true, Screen: LastLines(screen, 15)}
		}
		if time.Now().After(deadline) {
			return &NotReadyError{Waited: m.startTimeout(), Screen: LastLines(screen, 15)}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(readyPoll):
		}
	}
}

// deadNoticeWait bounds the wait for tmux's notice in a pane seen dead.
const deadNoticeWait = time.Second

// lastWords reports whether the pane's program has died and, if so, the
// last lines it printed (with the scrollback: Claude's error line may have
// scrolled up), without tmux's notice; the dead pane is removed.
func (m *Manager) lastWords(ctx context.Context, pane string) (string, bool) {
	panes, err := m.listPanes(ctx)
	if err != nil || !slices.ContainsFunc(panes, func(p tmux.Pane) bool { return p.ID == pane && p.Dead }) {
		return "", false
	}
	// tmux marks the pane dead before it has drawn all of it: its notice
	// comes last. A tmux.conf may reword the notice, so not for long.
	screen, _ := m.opt.Panes.Capture(ctx, pane, 200)
	for wait := time.Now().Add(deadNoticeWait); !strings.Contains(screen, tmux.DeadNotice) && time.Now().Before(wait) && ctx.Err() == nil; {
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
		screen, _ = m.opt.Panes.Capture(ctx, pane, 200)
	}
	if err := m.opt.Panes.KillPane(ctx, pane); err != nil {
		m.opt.Log.Warn("could not remove a dead Claude's pane", "pane", pane, "err", err)
	}
	var lines []string
	for line := range strings.SplitSeq(screen, "\n") {
		if line = strings.TrimRight(line, " "); line != "" && !strings.HasPrefix(line, tmux.DeadNotice) {
			lines = append(lines, line)
		}
	}
	if len(lines) > 10 {
		lines = lines[len(lines)-10:]
	}
	return strings.Join(lines, "\n"), true
}

// dialogWait bounds the wait for a person to answer a dialog at start: as
// long as Claude waits for a permission answer.
func (m *Manager) dialogWait() time.Duration {
	if d := m.config().Claude.PromptTimeout.Duration; d > 0 {
		return d
	}
	return config.DefaultPromptTimeout
}

// exitHint says what to check when Claude exited at once, with the last
// screen it showed, if any.
func (m *Manager) exitHint(last string) string {
	cfg := m.config().Claude
	hint := fmt.Sprintf("Claude exited at once: check [claude].command (%q), args %q and the permission mode; PATH=%s",
		cfg.Command, cfg.Args, panePath(m.config()))
	if last = strings.TrimSpace(LastLines(last, 10)); last != "" {
		hint += "\n" + last
	}
	return hint
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

// exitWait is how long a session gets to end after /exit before its pane is killed.
const exitWait = 5 * time.Second

// Stop ends a session gracefully: /exit (Claude saves its state and its
// SessionEnd hook runs), then the pane is killed if it is still there.
func (m *Manager) Stop(ctx context.Context, key string) error {
	unlock, err := m.lock(ctx, key)
	if err != nil {
		return err
	}
	defer unlock()
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
