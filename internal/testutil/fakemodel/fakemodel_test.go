package fakemodel

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func post(t *testing.T, url string, body any) string {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(url+"/v1/messages", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return string(out)
}

var tools = []any{map[string]any{"name": "Bash"}}

func TestScenarioStepsAndFinalQuote(t *testing.T) {
	s := New(t)
	s.Script("SCN_BASH", Tool("I will run a command.", "Bash", map[string]any{"command": "echo hi"}))
	user := map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "text", "text": "<system-reminder>ignore SCN_OTHER</system-reminder>"},
		map[string]any{"type": "text", "text": "hello SCN_BASH please"}}}
	first := post(t, s.URL, map[string]any{"model": "m", "stream": true, "tools": tools, "messages": []any{user}})
	for _, want := range []string{"event: message_start", `"text":"I will run a command."`, `"name":"Bash"`, `partial_json":"{\"command\":\"echo hi\"}"`, `"stop_reason":"tool_use"`} {
		if !strings.Contains(first, want) {
			t.Errorf("first step lacks %s:\n%s", want, first)
		}
	}
	second := post(t, s.URL, map[string]any{"model": "m", "stream": false, "tools": tools, "messages": []any{user,
		map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "toolu_fake_001"}}},
		map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_fake_001", "content": "hi"}}}}})
	if !strings.Contains(second, "Done. Last tool result: hi") || !strings.Contains(second, `"end_turn"`) {
		t.Errorf("final step = %s", second)
	}
	reqs := s.Requests()
	if len(reqs) != 2 || reqs[0].LastUserText != "hello SCN_BASH please" || reqs[1].ToolResults[0].Content != "hi" {
		t.Fatalf("requests = %+v", reqs)
	}
}

// A message typed while a tool ran comes beside the tool result (as 2.1.328
// sends it); the final answer addresses it, as a real model would.
func TestMidTurnMessageIsAnswered(t *testing.T) {
	s := New(t)
	s.Script("SCN_MID", Tool("", "Bash", map[string]any{"command": "echo hi"}))
	user := map[string]any{"role": "user", "content": "SCN_MID"}
	out := post(t, s.URL, map[string]any{"model": "m", "tools": tools, "messages": []any{user,
		map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "toolu_fake_001"}}},
		map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "tool_result", "tool_use_id": "toolu_fake_001", "content": "hi"},
			map[string]any{"type": "text", "text": "The user sent a new message while you were working:\nalso this\n\nThis is how Claude Code surfaces messages the user sends mid-turn."}}}}})
	if !strings.Contains(out, `Done. Last tool result: hi\nok: also this`) {
		t.Fatalf("final answer = %s", out)
	}
	if reqs := s.Requests(); len(reqs) != 1 || reqs[0].MidTurn != "also this" || reqs[0].LastUserText != "SCN_MID" {
		t.Fatalf("requests = %+v", reqs)
	}
}

func TestSideRequestsAndErrors(t *testing.T) {
	s := New(t)
	s.Script("SCN_ERR", Step{Status: 400, ErrMsg: "fake bad request"})
	if out := post(t, s.URL, map[string]any{"model": "m", "messages": []any{map[string]any{"role": "user", "content": "title SCN_ERR"}}}); !strings.Contains(out, "Fake title") {
		t.Errorf("side request = %s", out)
	}
	if out := post(t, s.URL, map[string]any{"model": "m", "tools": tools, "messages": []any{map[string]any{"role": "user", "content": "x SCN_ERR"}}}); !strings.Contains(out, "fake bad request") {
		t.Errorf("error step = %s", out)
	}
	if len(s.Requests()) != 1 {
		t.Errorf("side request logged as agent request")
	}
}
