package session

import (
	"context"
	"strings"
	"time"

	"github.com/ccbridge/ccbridge/internal/agent"
	"github.com/ccbridge/ccbridge/internal/agent/codex"
	"github.com/ccbridge/ccbridge/internal/tmux"
)

// turnShow bounds the waits for the input box after an Escape.
const turnShow = 3 * time.Second

// turnShowMax bounds the wait for the screen to show a turn the hooks
// already reported (UserPromptSubmit fires as the text is submitted, a
// moment before Claude's footer says "esc to interrupt"; seconds later on a
// loaded machine). The wait ends as soon as the screen shows the turn or the
// turn's end is recorded: it is a bound, not a guess of how long it takes.
const turnShowMax = 30 * time.Second

// InterruptTurn interrupts the running turn, also one that has only just
// started: an Escape pressed before the screen shows the turn interrupts
// nothing, and the turn then runs on. When the record says a turn runs,
// it first waits (briefly) for the screen to show it.
func (m *Manager) InterruptTurn(ctx context.Context, key string) error {
	if rec, err := m.opt.Store.Sessions.Get(key); err == nil && rec.Busy {
		pane, err := m.pane(ctx, key)
		if err != nil {
			return err
		}
		// A turn that already ended never shows: Interrupt then presses
		// one Escape on an idle screen, which does nothing.
		m.waitTurnShown(ctx, key, pane)
	}
	if err := m.Interrupt(ctx, key); err != nil {
		return err
	}
	a, err := m.agentOf(key)
	if err != nil {
		return nil // the Escapes went in; what is left in the box stays
	}
	if _, isCodex := a.(codex.Codex); isCodex {
		return nil // Codex never puts an interrupted prompt back into its composer
	}
	// An Escape before any output puts the prompt back into the input
	// box: it was withdrawn, so clear it, and the next message is not
	// appended to it.
	pane, err := m.pane(ctx, key)
	if err != nil {
		return nil
	}
	screen, err := m.waitScreen(ctx, pane, turnShow, func(s string) bool { return InputBoxShown(s) && !Busy(s) })
	if err != nil || boxEmpty(screen) {
		return nil
	}
	if strings.Contains(pane, "@") && !m.typedHere(key, screen) {
		return nil // a taken-over terminal: what is in its box is the person's
	}
	unlock, err := m.lock(ctx, key)
	if err != nil {
		return err
	}
	defer unlock()
	if err := m.keyIf(ctx, pane, tmux.KeyClearLine); err != nil {
		return err
	}
	_, _ = m.waitScreen(ctx, pane, turnShow, boxEmpty)
	return nil
}

// waitTurnShown waits until the screen shows the recorded turn running, or
// its end is recorded (Stop clears Busy), or turnShowMax passes.
func (m *Manager) waitTurnShown(ctx context.Context, key, pane string) {
	scr, err := m.agentOf(key)
	if err != nil {
		return
	}
	deadline := time.Now().Add(turnShowMax)
	for time.Now().Before(deadline) {
		if screen, err := m.opt.Panes.Capture(ctx, pane, 0); err != nil || scr.Busy(screen) {
			return
		}
		if rec, err := m.opt.Store.Sessions.Get(key); err != nil || !rec.Busy {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(typedPoll):
		}
	}
}

// boxEmpty reports whether the input box is shown and holds nothing.
func boxEmpty(screen string) bool {
	box, _, ok := inputBox(screen)
	return ok && agent.Squeeze(strings.TrimPrefix(strings.TrimSpace(box), "❯")) == ""
}
