package session

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/ccbridge/ccbridge/internal/agent"
	"github.com/ccbridge/ccbridge/internal/redact"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/tmux"
)

// Interrupt timing: how long to wait for the footer to drop "esc to
// interrupt" before pressing Escape again. Under load a single Escape was
// seen to be lost in the e2e tier. A second Escape is pressed only while the
// turn still runs: on an idle screen Esc Esc opens Claude's rewind menu.
// The footer must stay without it for interruptSettle: Claude redraws
// while an Escape lands, and one frame without "esc to interrupt" was seen
// in the e2e tier on a turn that then ran on.
const (
	interruptCheck   = 1500 * time.Millisecond
	interruptSettle  = 500 * time.Millisecond
	interruptPresses = 3
)

// Interrupt presses Escape until the turn stops. An interrupted turn fires
// no Stop hook, so the busy state is cleared here.
func (m *Manager) Interrupt(ctx context.Context, key string) error {
	pane, unlock, err := m.lockedPane(ctx, key)
	if err != nil {
		return err
	}
	defer unlock()
	scr, err := m.agentOf(key)
	if err != nil {
		return err
	}
	before, _ := m.opt.Panes.Capture(ctx, pane, 0)
	marks := strings.Count(before, scr.InterruptedMark())
	for range interruptPresses {
		// Escape for every agent: Ctrl+C quits an idle Codex at once.
		if err := m.opt.Panes.SendKeys(ctx, pane, tmux.KeyEscape); err != nil {
			return err
		}
		if !m.stillBusy(ctx, scr, pane, interruptCheck, marks) {
			break
		}
		m.opt.Log.Warn("turn still running after Escape; pressing it again", "session", key)
	}
	_, err = m.opt.Store.Sessions.Update(ctx, key, func(s *state.Session) error { s.Busy = false; return nil })
	return err
}

// interruptedMark is what Claude Code 2.1.328 writes under a prompt whose
// turn an Escape ended (claude-code-protocol.md §(e)).
const interruptedMark = "Interrupted · What should Claude do instead?"

// stillBusy polls the footer until it has shown no running turn for
// interruptSettle, and reports whether the turn still runs at the end of
// within. A new interruptedMark (more than marks) says the turn ended, even
// while a slow redraw still shows the old footer: another Escape then would
// land on an idle prompt, and two make Claude's rewind menu.
func (m *Manager) stillBusy(ctx context.Context, scr agent.Screen, pane string, within time.Duration, marks int) bool {
	deadline := time.Now().Add(within)
	var idleSince time.Time
	for {
		screen, err := m.opt.Panes.Capture(ctx, pane, 0)
		if err != nil || strings.Count(screen, scr.InterruptedMark()) > marks {
			return false
		}
		busy := scr.Busy(screen)
		switch {
		case busy:
			idleSince = time.Time{}
		case idleSince.IsZero():
			idleSince = time.Now()
		case time.Since(idleSince) >= interruptSettle:
			return false
		}
		if time.Now().After(deadline) {
			return busy
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
// Secrets are masked before it is cut, on the whole screen, so that one
// the TUI wrapped over several lines, or one at the cut, is masked whole.
func (m *Manager) Screen(ctx context.Context, key string, lines int) (string, error) {
	pane, err := m.pane(ctx, key)
	if err != nil {
		return "", err
	}
	screen, err := m.opt.Panes.Capture(ctx, pane, 0)
	if err != nil {
		return "", err
	}
	return Condense(redact.Screen(screen), lines, screenBudget), nil
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

// Status is what /status shows.
type Status struct {
	State   string // running, busy, waiting on a prompt, stopped
	Session state.Session
	// AgentName is the agent the session runs, as the config names it
	// ("" for a session never started): what a front end may show, never
	// a choice of behaviour, which stays the core's.
	AgentName string
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
	st := Status{State: "stopped", Session: rec, AgentName: m.agentFor(rec.Agent).Name()}
	pane, err := m.pane(ctx, key)
	if err != nil {
		return st, nil
	}
	st.State = "idle"
	if screen, err := m.opt.Panes.Capture(ctx, pane, 0); err == nil && m.agentFor(rec.Agent).DialogOpen(screen) {
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
	pane, unlock, err := m.lockedPane(ctx, key)
	if err != nil {
		return err
	}
	defer unlock()
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
