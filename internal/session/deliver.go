package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ccbridge/ccbridge/internal/agent"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/tmux"
)

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
//
// Inside Send, the session stays locked (against every process) from here
// until Send returns: Claude's receipt, and a second Enter if needed, come
// before anyone else types into the pane.
func (m *Manager) Deliver(ctx context.Context, key, text string) (time.Time, error) {
	unlock, err := m.lock(ctx, key)
	if err != nil {
		return time.Time{}, err
	}
	at, err := m.deliver(ctx, key, text)
	if err != nil || !keep(ctx, key, unlock) {
		unlock()
	}
	switch {
	case errors.Is(err, ErrDialogOpen):
		m.noticeDialog(ctx, key) // dialog.go
	case err == nil:
		m.delivered(key)
	}
	return at, err
}

func (m *Manager) deliver(ctx context.Context, key, text string) (time.Time, error) {
	pane, err := m.pane(ctx, key)
	if err != nil {
		return time.Time{}, err
	}
	return m.submit(ctx, key, pane, text)
}

// inputGuard is Claude's guardOf: "1. Yes" is highlighted first in its
// dialogs, so an Enter would answer one.
var inputGuard = guardOf(claudeScreen{})

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
	scr, err := m.agentOf(key)
	if err != nil {
		return time.Time{}, err
	}
	guard := guardOf(scr)
	screen, err := m.opt.Panes.Capture(ctx, pane, 0)
	if err != nil {
		return time.Time{}, err
	}
	if !scr.InputBoxShown(screen) {
		return time.Time{}, ErrDialogOpen
	}
	if strings.Contains(pane, "@") && InputText(screen) != "" && !m.typedHere(key, screen) {
		// A taken-over terminal is the person's: what is in its input box
		// is their draft, never cleared for a message from elsewhere.
		return time.Time{}, ErrDraft
	}
	// An interrupted prompt is put back into the input box; clear it so
	// the new text is not appended to it.
	if err := m.keyWith(ctx, guard, pane, tmux.KeyClearLine); err != nil {
		return time.Time{}, err
	}
	before := time.Now()
	if err := m.opt.Panes.PasteTextIf(ctx, pane, guard, text); err != nil {
		return time.Time{}, refused(err)
	}
	m.mu.Lock()
	m.typed[key] = text
	m.mu.Unlock()
	if err := m.waitTyped(ctx, scr, key, pane, text); err != nil {
		return time.Time{}, err
	}
	if err := m.keyWith(ctx, guard, pane, tmux.KeyEnter); err != nil {
		return time.Time{}, err
	}
	return before, nil
}

// typedHere reports whether the input box holds what ccbridge last typed
// into the session (left there when a dialog stopped its Enter).
func (m *Manager) typedHere(key, screen string) bool {
	m.mu.Lock()
	text := m.typed[key]
	m.mu.Unlock()
	scr, err := m.agentOf(key)
	return err == nil && text != "" && scr.InputHolds(screen, text)
}

// waitTyped waits until the input box shows text. If it never does but the
// box is there with no dialog (a rendering the check does not know), the
// caller may still press Enter: the guard on that key stands.
func (m *Manager) waitTyped(ctx context.Context, scr agent.Screen, key, pane, text string) error {
	deadline := time.Now().Add(pasteShow)
	for {
		screen, err := m.opt.Panes.Capture(ctx, pane, 0)
		if err != nil {
			return err
		}
		if scr.InputHolds(screen, text) {
			return nil
		}
		if !scr.InputBoxShown(screen) {
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

// keyIf presses keys into Claude's pane only if tmux sees no dialog as it
// sends them.
func (m *Manager) keyIf(ctx context.Context, pane string, keys ...tmux.Key) error {
	return m.keyWith(ctx, inputGuard, pane, keys...)
}

// keyWith presses keys only if tmux sees none of guard's dialog strings as
// it sends them.
func (m *Manager) keyWith(ctx context.Context, guard tmux.Guard, pane string, keys ...tmux.Key) error {
	return refused(m.opt.Panes.SendKeysIf(ctx, pane, guard, keys...))
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
	pane, unlock, err := m.lockedPane(ctx, key)
	if err != nil {
		return err
	}
	defer unlock()
	m.mu.Lock()
	text := m.typed[key]
	m.mu.Unlock()
	scr, err := m.agentOf(key)
	if err != nil {
		return err
	}
	screen, err := m.opt.Panes.Capture(ctx, pane, 0)
	if err != nil {
		return err
	}
	if !scr.InputBoxShown(screen) {
		return ErrDialogOpen
	}
	if text == "" || !scr.InputHolds(screen, text) {
		return ErrInputChanged
	}
	return m.keyWith(ctx, guardOf(scr), pane, tmux.KeyEnter)
}
