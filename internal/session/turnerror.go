package session

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/codexhook"
	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/execx"
	"github.com/ccbridge/ccbridge/internal/state"
)

// turnWatch is how often busy Codex sessions are looked at for a turn an
// API error ended: per session, what Codex appended to its rollout since.
const turnWatch = 2 * time.Second

// rolloutRead is how far one session's rollout has been read for its turn.
type rolloutRead struct {
	path, turn string
	off        int64
	done       bool // the turn's end was read
}

// WatchTurnErrors ends, until ctx ends, each Codex turn an API error ended.
// Codex fires no hook then (agents.md §1.2): the channel would hear
// nothing and the session stay busy (typing on, /stop waiting). The error
// is in the rollout's task_complete, and it goes to the Stop hook as the
// StopFailure Claude fires, which posts it and frees the session the same
// way. Here it costs least: the session records name the busy Codex
// sessions with their rollout and turn, so only those rollouts are read,
// each from where the last look stopped; the screen is never captured.
func (m *Manager) WatchTurnErrors(ctx context.Context) {
	read := map[string]rolloutRead{}
	tick := time.NewTicker(turnWatch)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		m.checkTurnErrors(ctx, read)
	}
}

// checkTurnErrors looks once; read is what was read before.
func (m *Manager) checkTurnErrors(ctx context.Context, read map[string]rolloutRead) {
	all, err := m.opt.Store.Sessions.List()
	if err != nil {
		m.opt.Log.Warn("sessions unreadable; turn errors not looked for", "err", err)
		return
	}
	for key := range read {
		if !turnWatched(all[key]) {
			delete(read, key)
		}
	}
	for key, s := range all {
		if !turnWatched(s) {
			continue
		}
		r := read[key]
		if r.path != s.TranscriptPath || r.turn != s.LastPromptID {
			// A new turn: from the start, as its lines may precede
			// where the last turn's reading stopped.
			r = rolloutRead{path: s.TranscriptPath, turn: s.LastPromptID}
		}
		if r.done {
			continue
		}
		f, ended, next, err := codexhook.TurnEnd(r.path, r.turn, r.off)
		if err != nil {
			m.opt.Log.Debug("rollout unreadable", "session", key, "err", err)
			continue
		}
		r.off, r.done = next, ended
		read[key] = r
		if ended && f.Message != "" {
			if err := m.reportTurnError(ctx, key, s, f); err != nil {
				m.opt.Log.Error("a Codex API error not reported", "session", key, "err", err)
			}
		}
	}
}

// turnWatched: a Codex session in a turn the hooks have named.
func turnWatched(s state.Session) bool {
	return s.Agent == config.AgentCodex && s.Busy && s.TranscriptPath != "" && s.LastPromptID != "" && s.ClaudeSessionID != ""
}

// hookEnvKeep is what a hook run for an agent keeps of the daemon's
// environment: never a bot token.
var hookEnvKeep = []string{"PATH", "HOME", "TMPDIR", "LANG", "LC_*", "TZ"}

// reportTurnError runs the Stop hook as Codex runs it (its flag), with the
// StopFailure payload Codex does not send, in the session's environment.
func (m *Manager) reportTurnError(ctx context.Context, key string, s state.Session, f codexhook.Failure) error {
	in, err := json.Marshal(claudehook.Input{HookEventName: claudehook.EventStopFailure, SessionID: s.ClaudeSessionID, TurnID: s.LastPromptID,
		TranscriptPath: s.TranscriptPath, Cwd: s.Cwd, LastAssistantMessage: f.Message, Error: f.Kind})
	if err != nil {
		return fmt.Errorf("encode the failure: %w", err)
	}
	env := execx.ChildEnv(os.Environ(), hookEnvKeep, state.EnvSession+"="+key, state.EnvRuntimeDir+"="+m.opt.Store.Dir.Root())
	if _, err := m.opt.Hooks.Run(ctx, execx.Cmd{Args: []string{m.opt.HookStop, codexhook.AgentFlag}, Env: env, Stdin: bytes.NewReader(in)}); err != nil {
		return fmt.Errorf("run the stop hook: %w", err)
	}
	m.opt.Log.Info("a Codex API error reported", "session", key, "turn", s.LastPromptID)
	return nil
}
