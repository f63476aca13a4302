package mcp

import (
	"context"
	"errors"
	"time"
)

// typist types one message of a session's FIFO, refusing once the server
// stops and recording when the text went in, so that stop spools exactly
// what was never typed.
type typist struct {
	Sessions
	s *Server
	m *outgoing
}

// receiptCheck bounds the look for the receipt of a message a stopped
// server may have typed.
const receiptCheck = 500 * time.Millisecond

// errStopping ends a delivery that the server's stop spooled.
var errStopping = errors.New("ccbridge mcp is stopping")

func (t typist) Deliver(ctx context.Context, key, text string) (time.Time, error) {
	t.s.mu.Lock()
	if t.s.stopping {
		t.s.mu.Unlock()
		return time.Time{}, errStopping
	}
	t.m.typing = true
	t.s.mu.Unlock()
	if !t.m.check.IsZero() && t.Sessions.WaitReceipt(ctx, key, t.m.check, text, receiptCheck) == nil {
		t.s.mu.Lock()
		t.m.typing, t.m.typed = false, true
		t.s.mu.Unlock()
		return t.m.check, nil // in already: Send finds its receipt
	}
	// A paste is never cut in half: stop waits for it instead.
	since, err := t.Sessions.Deliver(context.WithoutCancel(ctx), key, text)
	t.s.mu.Lock()
	t.m.typing, t.m.typed = false, err == nil
	t.s.mu.Unlock()
	return since, err
}
