package mcp

import (
	"context"
	"fmt"
	"time"

	"github.com/ccbridge/ccbridge/internal/session"
)

// deliver sends a message as a Discord message is sent (session.Send),
// through the session's FIFO: messages reach Claude in the order they
// were given. When it cannot go in now (a dialog is open, earlier
// messages wait in Claude Code's own queue until the turn ends, or
// earlier messages given here wait their turn), it reports the message
// queued at once and delivers it in the background when its turn comes.
func (s *Server) deliver(_ context.Context, key, text string) (queued bool, err error) {
	m := &outgoing{text: text, held: make(chan struct{}), done: make(chan error, 1), given: time.Now()}
	s.mu.Lock()
	behind := len(s.sends[key]) > 0
	s.sends[key] = append(s.sends[key], m)
	s.mu.Unlock()
	if behind {
		s.hold(m)
	} else {
		go s.sendLoop(key)
	}
	select {
	case err := <-m.done:
		return false, err
	case <-m.held:
		return true, nil
	}
}

// outgoing is a message in a session's FIFO.
type outgoing struct {
	text  string
	held  chan struct{} // closed when its caller was told it is queued
	done  chan error    // its outcome, when its caller still waits
	given time.Time
	// check, when set, is when a stopped server may have typed it: it is
	// typed only if Claude has received no such prompt since.
	check time.Time
	// Under Server.mu:
	queued, finished bool
	typing, typed    bool // in Claude's input box now, or already
	spooled          bool // left for the next server at stop
}

// hold answers a message's caller that it is queued, unless it already
// has its outcome.
func (s *Server) hold(m *outgoing) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !m.queued && !m.finished {
		m.queued = true
		close(m.held)
	}
}

// sendLoop delivers a session's messages one by one until its FIFO is
// empty. A queued message outlives the call that gave it: the client has
// been told it will go in, so the send runs under the server's context,
// with no overall timeout (a turn may run for long); the dialog wait and
// the receipt timeouts bound each step.
func (s *Server) sendLoop(key string) {
	s.mu.Lock()
	ctx := s.ctx
	s.mu.Unlock()
	if ctx == nil {
		ctx = context.Background()
	}
	for {
		s.mu.Lock()
		m := s.sends[key][0]
		s.mu.Unlock()
		hold := func() { s.hold(m) }
		err := session.Send(ctx, typist{s.opt.Sessions, s, m}, key, m.text, session.SendOptions{
			DialogWait: s.promptTimeout(),
			OnDialog:   hold,
			OnQueue:    hold,
		})
		s.mu.Lock()
		m.finished = true
		queued, spooled := m.queued, m.spooled
		if err != nil && queued && !spooled {
			s.undelivered[key] = append(s.undelivered[key], fmt.Sprintf("%q: %v", shorten(m.text, 100), err))
		}
		s.sends[key] = s.sends[key][1:]
		more := len(s.sends[key]) > 0
		if !more {
			delete(s.sends, key)
		}
		s.mu.Unlock()
		switch {
		case !queued:
			m.done <- err
		case spooled:
		case err != nil:
			s.opt.Log.Error("queued message not delivered", "session", key, "err", err)
		default:
			s.opt.Log.Info("queued message delivered", "session", key)
		}
		if !more {
			return
		}
	}
}
