package mcp

import (
	"cmp"
	"context"
	"path/filepath"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/history"
)

// Listing bounds.
const (
	defaultLimit = 20
	promptShown  = 200
)

// projects is where Claude Code keeps every session's transcript.
func (s *Server) projects() string { return history.ProjectsDir(s.opt.ClaudeHome) }

// rollouts is where Codex keeps every conversation's rollout.
func (s *Server) rollouts() string { return history.CodexSessionsDir(s.opt.CodexHome) }

// history finds one session of Claude Code's or Codex's history by id, in
// any directory.
func (s *Server) history(sid string) (history.Conversation, bool) {
	if sid == "" || safeID(sid) != sid {
		return history.Conversation{}, false
	}
	if c, ok := history.Find(s.projects(), "", sid); ok {
		return c, true
	}
	return history.FindCodex(s.rollouts(), "", sid)
}

func (s *Server) list(ctx context.Context, _ *sdk.CallToolRequest, in ListInput) (*sdk.CallToolResult, ListOutput, error) {
	limit := in.Limit
	if limit <= 0 {
		limit = defaultLimit
	}
	convs, err := history.List(s.projects(), in.WorkingDirectory, limit)
	if err != nil {
		return nil, ListOutput{}, toolError("could not read Claude Code's history in %s: %v", s.projects(), err)
	}
	codex, err := history.ListCodex(s.rollouts(), in.WorkingDirectory, limit)
	if err != nil {
		return nil, ListOutput{}, toolError("could not read Codex's history in %s: %v", s.rollouts(), err)
	}
	convs = append(convs, codex...)
	out := ListOutput{Sessions: []ListEntry{}}
	for _, c := range convs {
		e := ListEntry{SessionID: c.ID, WorkingDirectory: c.Cwd, FirstPrompt: shorten(c.FirstPrompt, promptShown), Time: c.Modified.UTC(),
			AgentName: cmp.Or(c.AgentName, config.DefaultAgent)}
		if key, _, found := s.find(ctx, c.ID); found {
			st := s.state(ctx, key, c.ID)
			e.IsActive, e.AgentName = st.IsActive, st.AgentName
			if e.IsActive {
				e.Status = st.Status
			}
		}
		out.Sessions = append(out.Sessions, e)
	}
	out.Sessions = append(out.Sessions, s.unlisted(ctx, in.WorkingDirectory)...)
	slices.SortStableFunc(out.Sessions, func(a, b ListEntry) int { return b.Time.Compare(a.Time) })
	if len(out.Sessions) > limit {
		out.Sessions = out.Sessions[:limit]
	}
	return nil, out, nil
}

// unlisted are the sessions started here that neither Claude Code's nor
// Codex's history holds (yet: Codex writes its rollout at the first
// prompt), in tree or below it.
func (s *Server) unlisted(ctx context.Context, tree string) []ListEntry {
	all, _ := s.opt.Store.Sessions.List()
	var out []ListEntry
	for key, rec := range all {
		sid := rec.ClaudeSessionID
		if !strings.HasPrefix(key, KeyPrefix) || sid == "" || !within(rec.Cwd, tree) {
			continue
		}
		if _, found := s.history(sid); found {
			continue
		}
		st := s.state(ctx, key, sid)
		e := ListEntry{SessionID: sid, WorkingDirectory: rec.Cwd, Time: rec.LastEventAt.UTC(), IsActive: st.IsActive, AgentName: st.AgentName}
		if e.IsActive {
			e.Status = st.Status
		}
		out = append(out, e)
	}
	return out
}

// within reports whether dir is tree or below it ("" holds all), as
// history.List filters.
func within(dir, tree string) bool {
	if tree == "" {
		return true
	}
	tree = filepath.Clean(tree)
	return dir == tree || strings.HasPrefix(dir, strings.TrimSuffix(tree, "/")+"/")
}

// shorten cuts text to n runes, marking the cut.
func shorten(text string, n int) string {
	if r := []rune(text); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return text
}
