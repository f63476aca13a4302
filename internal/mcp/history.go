package mcp

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ccbridge/ccbridge/internal/history"
)

// Listing bounds.
const (
	defaultLimit = 20
	promptShown  = 200
)

// projects is where Claude Code keeps every session's transcript.
func (s *Server) projects() string { return history.ProjectsDir(s.opt.ClaudeHome) }

// history finds one session of Claude Code's history by id, in any directory.
func (s *Server) history(sid string) (history.Conversation, bool) {
	if sid == "" || safeID(sid) != sid {
		return history.Conversation{}, false
	}
	return history.Find(s.projects(), "", sid)
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
	out := ListOutput{Sessions: []ListEntry{}}
	for _, c := range convs {
		e := ListEntry{SessionID: c.ID, WorkingDirectory: c.Cwd, FirstPrompt: shorten(c.FirstPrompt, promptShown), Time: c.Modified.UTC()}
		if key, _, found := s.find(ctx, c.ID); found {
			st := s.state(ctx, key, c.ID)
			e.IsActive = st.IsActive
			if e.IsActive {
				e.Status = st.Status
			}
		}
		out.Sessions = append(out.Sessions, e)
	}
	return nil, out, nil
}

// shorten cuts text to n runes, marking the cut.
func shorten(text string, n int) string {
	if r := []rune(text); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return text
}
