package hook

import (
	"context"
	"encoding/json"
	"os"
	"strings"

	"github.com/ccbridge/ccbridge/internal/audit"
	"github.com/ccbridge/ccbridge/internal/state"
)

// auditRequest logs how a card's request ended: decided in its chat (by
// the person the card names), answered or dismissed in the terminal, or
// expired.
func (h *handler) auditRequest(r state.Request) {
	e := audit.Entry{Kind: "permission", Server: r.Server, Session: r.Session, Channel: r.ChannelID, Tool: r.ToolName,
		Asked: asked(r.ToolName, r.ToolInput)}
	// The project, so that /audit in its channel finds the entry; a
	// session of another front end takes the project holding its cwd.
	if sess, err := h.store.Sessions.Get(r.Session); err == nil {
		sc := h.sessionScope(sess, sess.Cwd)
		e.Project = sc.project
		if e.Server == "" {
			e.Server = sc.server
		}
	}
	if r.ToolName == "AskUserQuestion" {
		e.Kind = "question"
	} else if r.ToolName == "ExitPlanMode" {
		e.Kind = "plan"
	}
	local := "local user"
	if u := os.Getenv("USER"); u != "" {
		local = u
	}
	switch r.Status {
	case state.RequestDecided:
		var d struct{ Behavior string }
		_ = json.Unmarshal(r.Decision, &d)
		e.Answer, e.From, e.Detail = d.Behavior, h.platform(e.Server), r.Outcome
		e.Who = mentioned(r.Outcome)
		if r.Via != "" { // decided by another front end (MCP), not a card click
			e.From, e.Who = r.Via, r.Via+" client"
		}
	case state.RequestTerminal:
		e.Answer, e.From, e.Who = "allow", audit.FromTerminal, local
	case state.RequestInterrupted:
		e.Answer, e.From, e.Who = "deny", audit.FromTerminal, local
		e.Detail = "dismissed in the terminal (No or Esc), or the turn stopped"
	case state.RequestExpired:
		e.Answer, e.From = "none", audit.FromTimeout
	default:
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), audit.LockWait)
	defer cancel()
	if err := h.appendAudit(ctx, e); err != nil {
		h.log.Error("audit", "err", err)
	}
}

// platform names the chat front end of server as the daemon recorded it
// with the route table; Discord when it did not (a record from before
// platforms, or none).
func (h *handler) platform(server string) string {
	if routes, err := h.store.Routes.Get(state.RoutesKey); err == nil {
		if p := routes.Platforms[server]; audit.Chat(p) {
			return p
		}
	}
	return audit.FromDiscord
}

// asked is a short description of a tool call.
func asked(tool string, input json.RawMessage) string {
	var fields map[string]any
	_ = json.Unmarshal(input, &fields)
	for _, k := range []string{"command", "file_path", "notebook_path", "url", "pattern", "plan"} {
		if v, ok := fields[k].(string); ok && v != "" {
			return tool + ": " + v
		}
	}
	if q, ok := fields["questions"].([]any); ok && len(q) > 0 {
		if m, ok := q[0].(map[string]any); ok {
			if s, ok := m["question"].(string); ok {
				return tool + ": " + s
			}
		}
	}
	return tool + " " + strings.TrimSpace(string(input))
}

// mentioned returns the user id of the first <@id> in s.
func mentioned(s string) string {
	_, rest, ok := strings.Cut(s, "<@")
	if !ok {
		return ""
	}
	rest = strings.TrimPrefix(rest, "!")
	id, _, ok := strings.Cut(rest, ">")
	if !ok || id == "" || strings.Trim(id, "0123456789") != "" {
		return ""
	}
	return id
}
