//go:build e2e

package e2e

import (
	"testing"

	"github.com/ccbridge/ccbridge/internal/testutil/fakeresponses"
)

// claude_start with agent "codex" runs the real Codex CLI in the daemon's
// tmux, with ccbridge's hooks: its session id comes from Codex's
// SessionStart, the prompt goes in, the turn's reply is claude_status's
// result, and claude_status and claude_list name the agent.
func TestMCPStartsCodex(t *testing.T) {
	t.Parallel()
	b, fake := newCodexBridge(t)
	e := mcpWithBridge(t, b, nil)
	e.dir = b.projects[1].dir // the folder the user's Codex config trusts
	sid := e.start("hello from mcp", map[string]any{"agent": "codex"})
	fake.WaitRequest(t, long, "the prompt", func(r fakeresponses.Request) bool { return r.LastUserText == "hello from mcp" })
	e.waitIdle(sid, "ok: hello from mcp")
	var st struct {
		Agent    string `json:"agent"`
		IsActive bool   `json:"isActive"`
	}
	e.must("claude_status", map[string]any{"sessionId": sid}, &st)
	if st.Agent != "codex" || !st.IsActive {
		t.Errorf("claude_status: %+v", st)
	}
	var list struct {
		Sessions []struct {
			SessionID string `json:"sessionId"`
			Agent     string `json:"agent"`
			IsActive  bool   `json:"isActive"`
		} `json:"sessions"`
	}
	e.must("claude_list", map[string]any{}, &list)
	found := false
	for _, s := range list.Sessions {
		if s.SessionID == sid {
			found = s.Agent == "codex" && s.IsActive
		}
	}
	if !found {
		t.Errorf("claude_list: %+v, want %s as an active codex session", list.Sessions, sid)
	}
	if err := e.call("claude_start", map[string]any{"prompt": "x", "workingDirectory": e.dir, "agent": "codex", "disallowedTools": []string{"Bash"}}, nil); err == nil {
		t.Error("claude_start took disallowedTools for Codex")
	}
}
