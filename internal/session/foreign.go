package session

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
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
// Inside the manager such a pane is named "<pane id>/<server pid>/<pane
// pid>@<socket path>"; the panes wrapper below sends each call to the right
// server, and has tmux check both pids as it sends every key and paste: a
// restarted server reuses pane ids, and its %7 may hold another Claude.

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

func foreignName(pane string, serverPID, panePID int, socket string) string {
	return fmt.Sprintf("%s/%d/%d@%s", pane, serverPID, panePID, socket)
}

// splitForeign parses a foreign name into the pane id, the pids every key
// into it is checked against, and the socket.
func splitForeign(name string) (pane string, ids tmux.Guard, socket string, ok bool) {
	head, socket, ok := strings.Cut(name, "@")
	f := strings.Split(head, "/")
	if !ok || !strings.HasPrefix(socket, "/") || len(f) != 3 {
		return "", tmux.Guard{}, "", false
	}
	server, err1 := strconv.Atoi(f[1])
	own, err2 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil || server <= 0 || own <= 0 {
		return "", tmux.Guard{}, "", false
	}
	return f[0], tmux.Guard{ServerPID: server, PanePID: own}, socket, true
}

// panes sends each call to the server its pane is on.
type panes struct {
	own  Panes
	user UserServers
}

// on returns the server of a pane, its id there and the guard every key
// and paste into it must also pass (the pids, for a taken-over pane).
func (p *panes) on(name string) (Panes, string, tmux.Guard, error) {
	pane, ids, socket, ok := splitForeign(name)
	if !ok {
		if strings.Contains(name, "@") {
			return nil, "", tmux.Guard{}, fmt.Errorf("%w: %q", ErrForeignGone, name)
		}
		return p.own, name, tmux.Guard{}, nil
	}
	s, err := p.user(socket)
	return s, pane, ids, err
}

func (p *panes) NewPane(ctx context.Context, spec tmux.PaneSpec) (string, error) {
	return p.own.NewPane(ctx, spec)
}

func (p *panes) ListPanes(ctx context.Context) ([]tmux.Pane, error) { return p.own.ListPanes(ctx) }

// SendKeys presses keys; into a taken-over pane only while it is still
// the same pane of the same server.
func (p *panes) SendKeys(ctx context.Context, name string, keys ...tmux.Key) error {
	s, pane, ids, err := p.on(name)
	if err != nil {
		return err
	}
	if ids.ServerPID == 0 {
		return s.SendKeys(ctx, pane, keys...)
	}
	return gone(s.SendKeysIf(ctx, pane, ids, keys...))
}

func (p *panes) PasteTextIf(ctx context.Context, name string, g tmux.Guard, text string) error {
	s, pane, ids, err := p.on(name)
	if err != nil {
		return err
	}
	if ids.ServerPID == 0 {
		return s.PasteTextIf(ctx, pane, g, text)
	}
	return refusedBy(ctx, s, pane, ids, s.PasteTextIf(ctx, pane, withIDs(g, ids), text))
}

func (p *panes) SendKeysIf(ctx context.Context, name string, g tmux.Guard, keys ...tmux.Key) error {
	s, pane, ids, err := p.on(name)
	if err != nil {
		return err
	}
	if ids.ServerPID == 0 {
		return s.SendKeysIf(ctx, pane, g, keys...)
	}
	return refusedBy(ctx, s, pane, ids, s.SendKeysIf(ctx, pane, withIDs(g, ids), keys...))
}

func withIDs(g tmux.Guard, ids tmux.Guard) tmux.Guard {
	g.ServerPID, g.PanePID = ids.ServerPID, ids.PanePID
	return g
}

// gone turns a refusal on the pids alone into ErrForeignGone.
func gone(err error) error {
	if errors.Is(err, tmux.ErrRefused) {
		return fmt.Errorf("%w: %w", ErrForeignGone, err)
	}
	return err
}

// refusedBy tells a guarded action refused for the screen (a dialog) from
// one refused for the pids (the pane is not the one taken over).
func refusedBy(ctx context.Context, s Panes, pane string, ids tmux.Guard, err error) error {
	if err == nil || !errors.Is(err, tmux.ErrRefused) {
		return err
	}
	list, lerr := s.ListPanes(ctx)
	if lerr == nil && slices.ContainsFunc(list, func(p tmux.Pane) bool {
		return p.ID == pane && !p.Dead && p.ServerPID == ids.ServerPID && p.PID == ids.PanePID
	}) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrForeignGone, err)
}

func (p *panes) Capture(ctx context.Context, name string, history int) (string, error) {
	s, pane, _, err := p.on(name)
	if err != nil {
		return "", err
	}
	return s.Capture(ctx, pane, history)
}

// LetGoOnExit applies to ccbridge's own panes only: it never starts one
// on a user's server.
func (p *panes) LetGoOnExit(ctx context.Context, name string) error {
	if strings.Contains(name, "@") {
		return nil
	}
	return p.own.LetGoOnExit(ctx, name)
}

// KillPane never kills a user's pane.
func (p *panes) KillPane(ctx context.Context, name string) error {
	if strings.Contains(name, "@") {
		return errors.New("refusing to kill a pane on the user's tmux server")
	}
	return p.own.KillPane(ctx, name)
}

// foreignPane returns the manager's name of a taken-over session's pane if
// it is still alive on its server, in the same server process, with the
// same process in it as at the take-over.
func (m *Manager) foreignPane(ctx context.Context, rec state.Session) (string, error) {
	p, err := m.foreignLookup(ctx, rec)
	if err != nil {
		return "", err
	}
	if rec.ServerPID == 0 || p.ServerPID != rec.ServerPID || p.PID != rec.PanePID {
		m.opt.Log.Warn("a taken-over pane is not the one taken over (tmux server or pane restarted)", "pane", rec.PaneID, "socket", rec.Socket,
			"server_pid", p.ServerPID, "want_server_pid", rec.ServerPID, "pane_pid", p.PID, "want_pane_pid", rec.PanePID)
		return "", ErrForeignGone
	}
	return foreignName(rec.PaneID, rec.ServerPID, rec.PanePID, rec.Socket), nil
}

// foreignLookup finds a taken-over session's pane, alive, on its server.
func (m *Manager) foreignLookup(ctx context.Context, rec state.Session) (tmux.Pane, error) {
	if rec.PaneID == "" {
		return tmux.Pane{}, ErrNoPane
	}
	if l, err := m.opt.Store.Live.Get(rec.ClaudeSessionID); err == nil && l.Ended {
		// Claude exited; the pane may hold the user's shell now, which
		// must never receive a message.
		return tmux.Pane{}, ErrForeignGone
	}
	s, err := m.opt.UserServers(rec.Socket)
	if err != nil {
		return tmux.Pane{}, err
	}
	list, err := s.ListPanes(ctx)
	if errors.Is(err, tmux.ErrNoServer) {
		return tmux.Pane{}, ErrForeignGone
	}
	if err != nil {
		return tmux.Pane{}, err
	}
	for _, p := range list {
		if p.ID == rec.PaneID && !p.Dead {
			return p, nil
		}
	}
	return tmux.Pane{}, ErrForeignGone
}

// TakeOver binds a hand-started Claude (recorded by its hooks) to the
// session key (a thread's): from now on its hooks post to that thread and
// messages there are typed into its pane. The pane must be alive.
func (m *Manager) TakeOver(ctx context.Context, t Target, claudeSessionID string) error {
	unlock, err := m.lock(ctx, t.Key)
	if err != nil {
		return err
	}
	defer unlock()
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
	// The pids seen now identify the pane from here on.
	p, err := m.foreignLookup(ctx, state.Session{PaneID: live.Pane, Socket: live.Socket, ClaudeSessionID: claudeSessionID})
	if err != nil {
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
		s.ServerPID, s.PanePID = p.ServerPID, p.PID
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
