package mcp

import (
	"context"
	"fmt"
	"strings"
)

// heldElsewhere says which other holder a Claude conversation has, when
// it is not running: a Discord session (its runtime record or its entry
// in the registry, which resumes it on its next message) or a Claude
// started by hand. Resuming it here as well would put two Claudes on one
// conversation, both appending to one transcript (security-2.md finding
// 16). "" means none: this front end may resume it.
func (s *Server) heldElsewhere(sid string) string {
	all, _ := s.opt.Store.Sessions.List()
	for k, r := range all {
		if r.ClaudeSessionID == sid && !strings.HasPrefix(k, KeyPrefix) {
			return fmt.Sprintf("is the conversation of ccbridge's session %s, which resumes it on its next message from Discord", k)
		}
	}
	if s.opt.Registry != nil {
		reg, _ := s.opt.Registry.Sessions.List()
		for k, g := range reg {
			if g.ClaudeSessionID == sid && !g.Archived {
				return fmt.Sprintf("is the conversation of ccbridge's session %s, which resumes it on its next message from Discord", k)
			}
		}
	}
	if l, err := s.opt.Store.Live.Get(sid); err == nil && !l.Ended {
		where := "outside tmux"
		if l.Pane != "" {
			where = "in pane " + l.Pane
		}
		return "is running in a Claude started by hand (" + where + ")"
	}
	return ""
}

// idle reports whether a live session runs no turn, shows no prompt and
// has no message of this server on its way in.
func (s *Server) idle(ctx context.Context, key string) bool {
	st, err := s.opt.Sessions.Status(ctx, key)
	if err != nil || st.State != "idle" {
		return false
	}
	if rec, err := s.opt.Store.Sessions.Get(key); err != nil || rec.Busy {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sends[key]) == 0
}
