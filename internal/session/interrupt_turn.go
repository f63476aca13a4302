package session

import (
	"context"
	"time"
)

// turnShow bounds the wait for the screen to show a turn the hooks already
// reported (UserPromptSubmit fires as the text is submitted, a moment
// before Claude's footer says "esc to interrupt").
const turnShow = 3 * time.Second

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
		_, _ = m.waitScreen(ctx, pane, turnShow, Busy)
	}
	return m.Interrupt(ctx, key)
}
