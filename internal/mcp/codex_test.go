package mcp

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/state"
)

// writeCodexRollout writes a rollout as Codex 0.171.0 does (agents.md
// §1.5) under home's sessions/: one prompt, a shell call, two messages.
func writeCodexRollout(t *testing.T, home, id, cwd string) string {
	t.Helper()
	dir := filepath.Join(home, "sessions", "2026", "11", "28")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "rollout-2026-11-28T16-01-13-"+id+".jsonl")
	rollout := strings.Join([]string{
		`{"type":"session_meta","payload":{"id":"` + id + `","cwd":"` + cwd + `","thread_source":"user"}}`,
		`{"type":"event_msg","payload":{"type":"item_completed","turn_id":"t1","item":{"type":"UserMessage","content":[{"type":"text","text":"list the files"}]}}}`,
		`{"type":"event_msg","payload":{"type":"item_completed","turn_id":"t1","item":{"type":"AgentMessage","content":[{"type":"Text","text":"Listing them."}]}}}`,
		`{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{}","call_id":"c1"}}`,
		`{"type":"event_msg","payload":{"type":"item_completed","turn_id":"t1","item":{"type":"CommandExecution","id":"c1","exit_code":0}}}`,
		`{"type":"event_msg","payload":{"type":"item_completed","turn_id":"t1","item":{"type":"AgentMessage","content":[{"type":"Text","text":"Two files:\na.go\nb.go"}]}}}`,
		`{"type":"event_msg","payload":{"type":"task_complete","turn_id":"t1","last_agent_message":"Two files:\na.go\nb.go"}}`,
	}, "\n") + "\n"
	if err := os.WriteFile(p, []byte(rollout), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// claude_status of a Codex session gives its recent output and tool calls
// from the rollout (not Claude's transcript format), for a session
// started here and for one only Codex's records hold; claude_list lists
// the latter too, as a Codex session.
func TestCodexStatusReadsTheRollout(t *testing.T) {
	h := newHarness(t, nil)
	cwd := t.TempDir()
	const mine, hand = "01a222e3-a253-77e3-89c2-c2978228edc7", "01a222e3-a253-77e3-89c2-c2978228edc8"
	path := writeCodexRollout(t, h.srv.opt.CodexHome, mine, cwd)
	writeCodexRollout(t, h.srv.opt.CodexHome, hand, cwd)
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := h.store.Sessions.Update(context.Background(), KeyPrefix+"0123456789abcdef", func(s *state.Session) error {
		s.Agent, s.ClaudeSessionID, s.TranscriptPath, s.Cwd = config.AgentCodex, mine, path, cwd
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{"Listing them.", "Two files:", "a.go", "b.go"}
	for _, sid := range []string{mine, hand} {
		var st StatusOutput
		if text, isErr := h.call(t, "claude_status", map[string]any{"sessionId": sid}, &st); isErr {
			t.Fatalf("claude_status %s: %s", sid, text)
		}
		if !slices.Equal(st.RecentOutput, want) || st.TurnCount != 1 || len(st.ToolUseEvents) != 1 ||
			st.ToolUseEvents[0] != (ToolUse{ToolName: "Bash", Status: "done"}) || st.AgentName != config.AgentCodex || st.WorkingDir != cwd {
			t.Errorf("claude_status of %s: %+v", sid, st)
		}
	}
	var list ListOutput
	if text, isErr := h.call(t, "claude_list", map[string]any{"workingDirectory": cwd}, &list); isErr {
		t.Fatal(text)
	}
	var got []string
	for _, e := range list.Sessions {
		got = append(got, e.SessionID+" "+e.AgentName+" "+e.FirstPrompt)
	}
	if !slices.Equal(got, []string{hand + " codex list the files", mine + " codex list the files"}) {
		t.Errorf("claude_list: %q", got)
	}
}

// claude_say to a Codex conversation only Codex's records hold resumes it
// with Codex (codex resume <id>), not Claude.
func TestSayResumesACodexConversationWithCodex(t *testing.T) {
	h := newHarness(t, nil)
	const hand = "01a222e3-a253-77e3-89c2-c2978228edc8"
	writeCodexRollout(t, h.srv.opt.CodexHome, hand, t.TempDir())
	if text, isErr := h.call(t, "claude_say", map[string]any{"sessionId": hand, "message": "and now?"}, nil); isErr {
		t.Fatalf("claude_say: %s", text)
	}
	if n, agent, resume := h.sessions.lastTarget(t); n != 1 || agent != config.AgentCodex || resume != hand {
		t.Errorf("%d started, agent %q, resume %q", n, agent, resume)
	}
}
