package session

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/history"
	"github.com/ccbridge/ccbridge/internal/state"
)

// LiveSession is one running Claude in a project's tree, as /sessions
// lists it.
type LiveSession struct {
	Key             string // ccbridge's session key; "" for a hand-started one not taken over
	Hand            bool   // started by hand, outside ccbridge
	Driveable       bool   // in a tmux pane ccbridge can type into
	ClaudeSessionID string
	Pane            string
	ThreadID        string // for a session of a thread
	State           string // busy, idle, waiting on a prompt
	LastPrompt      string
	LastEventAt     time.Time
}

// LiveSessions lists the running Claude sessions of a project: ccbridge's
// own (channel and threads) and the hand-started ones its hooks recorded.
func (m *Manager) LiveSessions(ctx context.Context, server, project string) ([]LiveSession, error) {
	var out []LiveSession
	own, err := m.opt.Store.Sessions.List()
	if err != nil {
		return nil, err
	}
	taken := map[string]string{} // claude session id → key of the thread that took it over
	for key, s := range own {
		if s.Server != server || s.Project != project || strings.HasPrefix(key, "hand-") {
			continue
		}
		if s.Socket != "" {
			// A take-over its thread released (archived) is the user's
			// again: listed below as hand-started.
			if l, err := m.opt.Store.Live.Get(s.ClaudeSessionID); err != nil || l.Bound != key {
				continue
			}
		}
		st, err := m.Status(ctx, key)
		if err != nil || st.State == "stopped" {
			continue
		}
		if s.Socket != "" {
			taken[s.ClaudeSessionID] = key
		}
		l := LiveSession{Key: key, Hand: s.Socket != "", Driveable: true, ClaudeSessionID: s.ClaudeSessionID, Pane: s.PaneID,
			ThreadID: s.ThreadID, State: st.State, LastEventAt: s.LastEventAt}
		if n := len(s.Prompts); n > 0 {
			l.LastPrompt = s.Prompts[n-1].Text
		}
		out = append(out, l)
	}
	hand, err := m.opt.Store.Live.List()
	if err != nil {
		return nil, err
	}
	for id, l := range hand {
		if l.Server != server || l.Project != project || l.Ended || taken[id] != "" {
			continue
		}
		ls := LiveSession{Hand: true, Driveable: l.Driveable(), ClaudeSessionID: id, Pane: l.Pane,
			LastPrompt: l.LastPrompt, LastEventAt: l.LastEventAt, State: "idle"}
		if l.Busy {
			ls.State = "busy"
		}
		if ls.Driveable {
			p, err := m.foreignLookup(ctx, state.Session{PaneID: l.Pane, Socket: l.Socket})
			if err != nil {
				continue // its pane is gone
			}
			if screen, err := m.opt.Panes.Capture(ctx, foreignName(l.Pane, p.ServerPID, p.PID, l.Socket), 0); err == nil && DialogOpen(screen) {
				ls.State = "waiting on a prompt"
			}
		} else if time.Since(l.LastEventAt) > outsideTmuxFresh {
			continue // no way to tell it is still there
		}
		out = append(out, ls)
	}
	slices.SortFunc(out, func(a, b LiveSession) int { return b.LastEventAt.Compare(a.LastEventAt) })
	return out, nil
}

// outsideTmuxFresh is how long a Claude outside tmux is listed after its
// last hook event (nothing else tells whether it still runs).
const outsideTmuxFresh = time.Hour

// ClaudeConfigDir is the config dir (~/.claude) of the Claude that
// ccbridge starts: CLAUDE_CONFIG_DIR or HOME from [claude].env, else this
// process's. Its projects/ folder holds every session's transcript.
func ClaudeConfigDir(cfg *config.Config) string {
	var env map[string]string
	if cfg != nil {
		env = cfg.Claude.Env
	}
	if d := env["CLAUDE_CONFIG_DIR"]; d != "" {
		return d
	}
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" && env["HOME"] == "" {
		return d
	}
	home := env["HOME"]
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".claude")
}

// CodexHome is the home ($CODEX_HOME, ~/.codex) of the Codex that ccbridge
// starts: CODEX_HOME or HOME from [codex].env, else this process's. Its
// sessions/ folder holds every conversation's rollout.
func CodexHome(cfg *config.Config) string {
	var env map[string]string
	if cfg != nil {
		env = cfg.Codex.Env
	}
	if d := env["CODEX_HOME"]; d != "" {
		return d
	}
	if d := os.Getenv("CODEX_HOME"); d != "" && env["HOME"] == "" {
		return d
	}
	home := env["HOME"]
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".codex")
}

// projectAgent is the agent of server's project ("" for a folder opened
// with /open, which runs Claude).
func (m *Manager) projectAgent(server, project string) string {
	for _, s := range m.config().Servers {
		if s.Name != server {
			continue
		}
		for _, p := range s.Projects {
			if p.Name == project {
				return p.AgentName()
			}
		}
	}
	return ""
}

// History lists a project's recent conversations in dir from its agent's
// own records.
func (m *Manager) History(server, project, dir string, limit int) ([]history.Conversation, error) {
	if m.projectAgent(server, project) == config.AgentCodex {
		return history.ListCodex(history.CodexSessionsDir(CodexHome(m.config())), dir, limit)
	}
	return history.List(history.ProjectsDir(ClaudeConfigDir(m.config())), dir, limit)
}

// Conversation finds one past conversation of a project's agent by its id.
func (m *Manager) Conversation(server, project, dir, id string) (history.Conversation, bool) {
	if m.projectAgent(server, project) == config.AgentCodex {
		return history.FindCodex(history.CodexSessionsDir(CodexHome(m.config())), dir, id)
	}
	return history.Find(history.ProjectsDir(ClaudeConfigDir(m.config())), dir, id)
}

// LiveRecord returns what the hooks recorded of a hand-started Claude.
func (m *Manager) LiveRecord(claudeSessionID string) (state.Live, error) {
	return m.opt.Store.Live.Get(claudeSessionID)
}
