package session

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ccbridge/ccbridge/internal/execx"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/tmux"
)

// A foreign pane is a pane on the user's own tmux server running a Claude
// that ccbridge did not start, taken over from Discord. It is driven with
// the same paste, receipt and dialog rules as ccbridge's own panes (every
// key and paste goes through the same code, addressed to the other server),
// but it stays the user's: ccbridge never starts, kills or closes it.
//
// Inside the manager such a pane is named "<pane id>@<socket path>"; the
// panes wrapper below sends each call to the right server.

// ErrForeignGone says a taken-over pane is no longer there.
var ErrForeignGone = errors.New("the terminal pane this session was taken over in is gone")

// ErrNotDriveable says a hand-started Claude runs outside tmux.
var ErrNotDriveable = errors.New("this Claude runs outside tmux: ccbridge can list it but not type into it")

// UserServers opens a handle on the tmux server at a socket path.
type UserServers func(socket string) (Panes, error)

// defaultUserServers talks to any tmux server by its socket path.
func defaultUserServers(socket string) (Panes, error) {
	return tmux.UserServer(execx.Exec{}, socket)
}

func foreignName(pane, socket string) string { return pane + "@" + socket }

func splitForeign(name string) (pane, socket string, ok bool) {
	pane, socket, ok = strings.Cut(name, "@")
	return pane, socket, ok && strings.HasPrefix(socket, "/")
}

// panes sends each call to the server its pane is on.
type panes struct {
	own  Panes
	user UserServers
}

func (p *panes) on(name string) (Panes, string, error) {
	pane, socket, ok := splitForeign(name)
	if !ok {
		return p.own, name, nil
	}
	s, err := p.user(socket)
	return s, pane, err
}

func (p *panes) NewPane(ctx context.Context, spec tmux.PaneSpec) (string, error) {
	return p.own.NewPane(ctx, spec)
}

func (p *panes) ListPanes(ctx context.Context) ([]tmux.Pane, error) { return p.own.ListPanes(ctx) }

func (p *panes) SendKeys(ctx context.Context, name string, keys ...tmux.Key) error {
	s, pane, err := p.on(name)
	if err != nil {
		return err
	}
	return s.SendKeys(ctx, pane, keys...)
}

func (p *panes) PasteTextIf(ctx context.Context, name string, g tmux.Guard, text string) error {
	s, pane, err := p.on(name)
	if err != nil {
		return err
	}
	return s.PasteTextIf(ctx, pane, g, text)
}

func (p *panes) SendKeysIf(ctx context.Context, name string, g tmux.Guard, keys ...tmux.Key) error {
	s, pane, err := p.on(name)
	if err != nil {
		return err
	}
	return s.SendKeysIf(ctx, pane, g, keys...)
}

func (p *panes) Capture(ctx context.Context, name string, history int) (string, error) {
	s, pane, err := p.on(name)
	if err != nil {
		return "", err
	}
	return s.Capture(ctx, pane, history)
}

// KillPane never kills a user's pane.
func (p *panes) KillPane(ctx context.Context, name string) error {
	if _, _, ok := splitForeign(name); ok {
		return errors.New("refusing to kill a pane on the user's tmux server")
	}
	return p.own.KillPane(ctx, name)
}

// foreignPane returns the manager's name of a taken-over session's pane if
// it is still alive on its server.
func (m *Manager) foreignPane(ctx context.Context, rec state.Session) (string, error) {
	if rec.PaneID == "" {
		return "", ErrNoPane
	}
	if l, err := m.opt.Store.Live.Get(rec.ClaudeSessionID); err == nil && l.Ended {
		// Claude exited; the pane may hold the user's shell now, which
		// must never receive a message.
		return "", ErrForeignGone
	}
	s, err := m.opt.UserServers(rec.Socket)
	if err != nil {
		return "", err
	}
	list, err := s.ListPanes(ctx)
	if errors.Is(err, tmux.ErrNoServer) {
		return "", ErrForeignGone
	}
	if err != nil {
		return "", err
	}
	for _, p := range list {
		if p.ID == rec.PaneID && !p.Dead {
			return foreignName(rec.PaneID, rec.Socket), nil
		}
	}
	return "", ErrForeignGone
}

// TakeOver binds a hand-started Claude (recorded by its hooks) to the
// session key (a thread's): from now on its hooks post to that thread and
// messages there are typed into its pane. The pane must be alive.
func (m *Manager) TakeOver(ctx context.Context, t Target, claudeSessionID string) error {
	defer m.lock(t.Key)()
	live, err := m.opt.Store.Live.Get(claudeSessionID)
	if err != nil {
		return fmt.Errorf("no record of that Claude session: %w", err)
	}
	if !live.Driveable() {
		return ErrNotDriveable
	}
	if live.Ended {
		return ErrForeignGone
	}
	rec := state.Session{PaneID: live.Pane, Socket: live.Socket}
	if _, err := m.foreignPane(ctx, rec); err != nil {
		return err
	}
	if live.Bound != "" && live.Bound != t.Key {
		if cur, err := m.opt.Store.Sessions.Get(live.Bound); err == nil && cur.Socket == live.Socket && cur.PaneID == live.Pane {
			return fmt.Errorf("this Claude is already taken over by another thread")
		}
	}
	if _, err := m.opt.Store.Sessions.Update(ctx, t.Key, func(s *state.Session) error {
		s.Server, s.Project, s.ChannelID, s.ThreadID, s.Cwd = t.Server, t.Project, t.ChannelID, t.ThreadID, live.Cwd
		s.PaneID, s.Socket, s.Progress = live.Pane, live.Socket, t.Progress
		s.ClaudeSessionID, s.TranscriptPath, s.Busy = live.ClaudeSessionID, live.TranscriptPath, live.Busy
		return nil
	}); err != nil {
		return err
	}
	_, err = m.opt.Store.Live.Update(ctx, claudeSessionID, func(l *state.Live) error { l.Bound = t.Key; return nil })
	m.opt.Log.Info("took over a hand-started Claude", "session", t.Key, "pane", live.Pane, "socket", live.Socket, "claude_session", claudeSessionID)
	return err
}

// ensureForeign is Ensure for a taken-over session: its pane if alive
// (bound again if a closed thread released it), never a new Claude.
func (m *Manager) ensureForeign(ctx context.Context, key string, rec state.Session) (string, error) {
	name, err := m.foreignPane(ctx, rec)
	if err != nil {
		return "", err
	}
	m.bindLive(ctx, rec.ClaudeSessionID, key, key)
	return name, nil
}

// bindLive sets the live record's binding from one key to another ("" releases).
func (m *Manager) bindLive(ctx context.Context, claudeSessionID, from, to string) {
	if claudeSessionID == "" {
		return
	}
	if _, err := m.opt.Store.Live.Get(claudeSessionID); err != nil {
		return
	}
	if _, err := m.opt.Store.Live.Update(ctx, claudeSessionID, func(l *state.Live) error {
		if l.Bound == "" || l.Bound == from {
			l.Bound = to
		}
		return nil
	}); err != nil {
		m.opt.Log.Error("could not update a taken-over Claude's binding", "claude_session", claudeSessionID, "err", err)
	}
}

// release ends a take-over without touching the pane: the hooks go back to
// posting in the project channel, and the Claude keeps running.
func (m *Manager) release(ctx context.Context, key string, rec state.Session) error {
	m.bindLive(ctx, rec.ClaudeSessionID, key, "")
	m.opt.Log.Info("released a taken-over Claude; its pane keeps running", "session", key, "pane", rec.PaneID, "socket", rec.Socket)
	_, err := m.opt.Store.Sessions.Update(ctx, key, func(s *state.Session) error { s.Busy = false; return nil })
	return err
}

// forking reports whether a session starts as a fork of the conversation
// it resumes: its registry entry says so until it has a session id of its
// own (the relay records the fork's new id there).
func (m *Manager) forking(t Target) bool {
	if m.opt.Registry == nil || t.Resume == "" {
		return false
	}
	reg, err := m.opt.Registry.Sessions.Get(t.Key)
	return err == nil && reg.ForkOf != "" && reg.ForkOf == t.Resume
}
