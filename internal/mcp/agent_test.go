package mcp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/session"
)

// lastTarget is the target of the last Ensure.
func (f *fakeSessions) lastTarget(t *testing.T) (n int, agent, resume string) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.targets) == 0 {
		return 0, "", ""
	}
	last := f.targets[len(f.targets)-1]
	return len(f.targets), last.Agent, last.Resume
}

// claude_start runs the agent it is given, Claude by default, and
// claude_status names each session's agent.
func TestStartTakesAnAgent(t *testing.T) {
	h := newHarness(t, nil)
	for _, tc := range []struct{ arg, want string }{{"", config.AgentClaude}, {config.AgentClaude, config.AgentClaude}, {config.AgentCodex, config.AgentCodex}} {
		args := map[string]any{"prompt": "hi", "workingDirectory": t.TempDir()}
		if tc.arg != "" {
			args["agent"] = tc.arg
		}
		var out StartOutput
		if text, isErr := h.call(t, "claude_start", args, &out); isErr {
			t.Fatalf("claude_start %v: %s", args, text)
		}
		// The front end passes the name on as given: the core's default
		// is the core's.
		if _, agent, _ := h.sessions.lastTarget(t); agent != tc.arg {
			t.Errorf("agent %q started %q", tc.arg, agent)
		}
		if out.AgentName != tc.want {
			t.Errorf("claude_start with agent %q reports %q", tc.arg, out.AgentName)
		}
		var st StatusOutput
		if text, isErr := h.call(t, "claude_status", map[string]any{"sessionId": out.SessionID}, &st); isErr || st.AgentName != tc.want {
			t.Errorf("claude_status of a %q session: agent %q (%s)", tc.want, st.AgentName, text)
		}
	}
}

// An agent ccbridge does not know is refused naming the ones it does, and
// nothing is started.
func TestStartRefusesAnUnknownAgent(t *testing.T) {
	h := newHarness(t, nil)
	text, isErr := h.call(t, "claude_start", map[string]any{"prompt": "hi", "workingDirectory": t.TempDir(), "agent": "gpt"}, nil)
	if !isErr || !strings.Contains(text, `"gpt"`) || !strings.Contains(text, strings.Join(config.Agents, ", ")) {
		t.Errorf("claude_start with agent gpt: %q (error %v)", text, isErr)
	}
	if n, _, _ := h.sessions.lastTarget(t); n != 0 {
		t.Errorf("%d sessions started", n)
	}
}

// The client is told the agents in claude_start's schema.
func TestStartSchemaListsTheAgents(t *testing.T) {
	h := newHarness(t, nil)
	res, err := h.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if tool.Name != "claude_start" {
			continue
		}
		b, _ := tool.InputSchema.(map[string]any)
		props, _ := b["properties"].(map[string]any)
		agent, _ := props["agent"].(map[string]any)
		enum, _ := agent["enum"].([]any)
		var got []string
		for _, e := range enum {
			s, _ := e.(string)
			got = append(got, s)
		}
		if !slices.Equal(got, config.Agents) {
			t.Errorf("agent's enum %v, want %v", agent["enum"], config.Agents)
		}
		return
	}
	t.Fatal("no claude_start")
}

// A session whose pane is gone is resumed with the agent it ran.
func TestSayResumesWithTheSessionsAgent(t *testing.T) {
	h := newHarness(t, nil)
	var out StartOutput
	if text, isErr := h.call(t, "claude_start", map[string]any{"prompt": "hi", "workingDirectory": t.TempDir(), "agent": config.AgentCodex}, &out); isErr {
		t.Fatal(text)
	}
	key := KeyPrefix + strings.TrimPrefix(out.SessionID, "sid-")
	h.sessions.mu.Lock()
	h.sessions.stopped = map[string]bool{key: true}
	h.sessions.mu.Unlock()
	var said SayOutput
	if text, isErr := h.call(t, "claude_say", map[string]any{"sessionId": out.SessionID, "message": "more"}, &said); isErr || !said.Resumed {
		t.Fatalf("claude_say = %q %+v", text, said)
	}
	if n, agent, resume := h.sessions.lastTarget(t); n != 2 || agent != config.AgentCodex || resume != out.SessionID {
		t.Errorf("resumed %d: agent %q, resume %q", n, agent, resume)
	}
}

// claude_list names each session's agent: Claude's history is Claude's,
// and a session started here with another agent, which leaves no Claude
// transcript, is listed too.
func TestListNamesEachSessionsAgent(t *testing.T) {
	h := newHarness(t, nil)
	dir := filepath.Join(h.srv.projects(), "-w-app")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	line := `{"type":"user","cwd":"/w/app","sessionId":"old","message":{"role":"user","content":"fix it"}}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "old.jsonl"), []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	var out StartOutput
	if text, isErr := h.call(t, "claude_start", map[string]any{"prompt": "hi", "workingDirectory": work, "agent": config.AgentCodex}, &out); isErr {
		t.Fatal(text)
	}
	var list ListOutput
	if text, isErr := h.call(t, "claude_list", map[string]any{}, &list); isErr {
		t.Fatal(text)
	}
	got := map[string]ListEntry{}
	for _, e := range list.Sessions {
		got[e.SessionID] = e
	}
	if e := got["old"]; e.AgentName != config.AgentClaude || e.IsActive {
		t.Errorf("history session: %+v", e)
	}
	if e := got[out.SessionID]; e.AgentName != config.AgentCodex || !e.IsActive || e.WorkingDirectory != work {
		t.Errorf("Codex session: %+v (all %+v)", e, list.Sessions)
	}
	// The directory filter holds for them too.
	if text, isErr := h.call(t, "claude_list", map[string]any{"workingDirectory": "/w"}, &list); isErr || len(list.Sessions) != 1 || list.Sessions[0].SessionID != "old" {
		t.Errorf("claude_list under /w = %q %+v", text, list.Sessions)
	}
}

// The core's refusal to start an agent reaches the client as it is, under
// no agent's name.
func TestStartRefusalNamesNoAgentOfItsOwn(t *testing.T) {
	h := newHarness(t, nil)
	h.sessions.ensureErr = fmt.Errorf("Codex takes none of Claude Code's flags (--disallowedTools): %w", session.ErrNotWithAgent)
	text, isErr := h.call(t, "claude_start", map[string]any{"prompt": "hi", "workingDirectory": t.TempDir(), "agent": config.AgentCodex,
		"disallowedTools": []string{"Bash"}}, nil)
	if !isErr || !strings.Contains(text, "Codex takes none of Claude Code's flags (--disallowedTools)") || strings.Contains(text, "start Claude") {
		t.Errorf("claude_start = %q (error %v)", text, isErr)
	}
}

// An agent that reports its session id only with the first prompt (Codex
// fires SessionStart then) is given the prompt before its id is awaited.
func TestStartDeliversBeforeTheSessionID(t *testing.T) {
	h := newHarness(t, nil)
	h.srv.opt.SessionIDWait = 2 * time.Second
	h.sessions.sidOnPrompt = true
	var out StartOutput
	if text, isErr := h.call(t, "claude_start", map[string]any{"prompt": "hi", "workingDirectory": t.TempDir(), "agent": config.AgentCodex}, &out); isErr {
		t.Fatalf("claude_start: %s", text)
	}
	if out.SessionID == "" || !slices.Equal(h.sessions.deliveredTexts(), []string{"hi"}) {
		t.Errorf("claude_start = %+v, delivered %q", out, h.sessions.deliveredTexts())
	}
}
