package fakeresponses

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

type event struct {
	name string
	data map[string]any
}

// post sends a Responses request and parses the answer: the events of a
// stream, or the JSON body of an error.
func post(t *testing.T, url string, body any) (int, []event, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(url+"/v1/responses", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, nil, e
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	var events []event
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	var name string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var d map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d); err != nil {
				t.Fatal(err)
			}
			if d["type"] != name {
				t.Errorf("event %s carries type %v", name, d["type"])
			}
			events = append(events, event{name, d})
		}
	}
	return resp.StatusCode, events, nil
}

func names(events []event) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.name)
	}
	return out
}

func userMsg(text string) map[string]any {
	return map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": text}}}
}

// turn is a request shaped as Codex 0.171.0 sends one: its own developer and
// context messages before the typed prompt.
func turn(items ...any) map[string]any {
	input := []any{
		map[string]any{"type": "message", "role": "developer", "content": []any{map[string]any{"type": "input_text", "text": "You are a coding agent SCN_X"}}},
		userMsg("<environment_context>\n  <cwd>/p/SCN_X</cwd>\n</environment_context>"),
	}
	return map[string]any{"model": "gpt-fake", "stream": true, "tools": []any{map[string]any{"type": "function", "name": "exec_command"},
		map[string]any{"type": "web_search"}}, "input": append(input, items...)}
}

func TestTextAnswerStreamsTheEventsCodexReads(t *testing.T) {
	s := New(t)
	s.Script("SCN_TWO", Text("first", "second"))
	status, events, _ := post(t, s.URL, turn(userMsg("hello SCN_TWO")))
	if status != 200 {
		t.Fatalf("status %d", status)
	}
	part := []string{"response.output_item.added", "response.content_part.added", "response.output_text.delta",
		"response.output_text.done", "response.content_part.done", "response.output_item.done"}
	want := append(append(append([]string{"response.created", "response.in_progress"}, part...), part...), "response.completed")
	if got := names(events); !reflect.DeepEqual(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	for i, e := range events {
		if e.data["sequence_number"] != float64(i) {
			t.Errorf("%s has sequence_number %v, want %d", e.name, e.data["sequence_number"], i)
		}
	}
	if d := events[4].data; d["delta"] != "first" || d["output_index"] != float64(0) {
		t.Errorf("first delta %v", d)
	}
	done := events[7].data["item"].(map[string]any)
	if done["type"] != "message" || done["role"] != "assistant" || done["status"] != "completed" ||
		done["content"].([]any)[0].(map[string]any)["text"] != "first" {
		t.Errorf("first item done %v", done)
	}
	resp := events[len(events)-1].data["response"].(map[string]any)
	if resp["status"] != "completed" || len(resp["output"].([]any)) != 2 || resp["model"] != "gpt-fake" {
		t.Errorf("completed %v", resp)
	}
	u := resp["usage"].(map[string]any)
	if u["input_tokens"] != float64(120) || u["output_tokens"] != float64(12) || u["total_tokens"] != float64(132) ||
		u["input_tokens_details"].(map[string]any)["cached_tokens"] != float64(0) {
		t.Errorf("default usage %v", u)
	}
	reqs := s.Requests()
	if len(reqs) != 1 || reqs[0].LastUserText != "hello SCN_TWO" || reqs[0].Title || !reflect.DeepEqual(reqs[0].ToolNames(), []string{"exec_command", "web_search"}) {
		t.Errorf("logged %+v", reqs)
	}
}

func TestScenarioCallThenFinalQuotesTheOutput(t *testing.T) {
	s := New(t)
	s.Script("SCN_EXEC", Exec("I will run a command.", "echo <hi>"))
	_, events, _ := post(t, s.URL, turn(userMsg("run SCN_EXEC")))
	var call map[string]any
	for _, e := range events {
		if e.name == "response.output_item.done" && e.data["item"].(map[string]any)["type"] == "function_call" {
			call = e.data["item"].(map[string]any)
		}
	}
	if call == nil || call["name"] != "exec_command" || call["arguments"] != `{"cmd":"echo <hi>"}` || call["call_id"] == "" {
		t.Fatalf("function call %v in %v", call, names(events))
	}
	// Codex sends the whole conversation back with the call's output.
	_, events, _ = post(t, s.URL, turn(userMsg("run SCN_EXEC"),
		map[string]any{"type": "message", "role": "assistant", "content": []any{map[string]any{"type": "output_text", "text": "I will run a command."}}},
		map[string]any{"type": "function_call", "call_id": call["call_id"], "name": "exec_command", "arguments": call["arguments"]},
		map[string]any{"type": "function_call_output", "call_id": call["call_id"], "output": "Output:\nhi\n"}))
	if got := events[4].data["delta"]; got != "Done. Last tool output: Output:\nhi\n" {
		t.Errorf("final answer %q", got)
	}
	last := s.Requests()[1]
	if len(last.Outputs) != 1 || last.Outputs[0].CallID != call["call_id"] || last.LastUserText != "run SCN_EXEC" {
		t.Errorf("logged %+v", last)
	}
}

func TestTitleRequestIsAnsweredWithTitleJSON(t *testing.T) {
	s := New(t)
	s.SetTitle("Say hello")
	body := turn(userMsg("Generate a concise, single-line task title"))
	body["tools"] = []any{}
	body["text"] = map[string]any{"format": map[string]any{"type": "json_schema", "name": "codex_output_schema", "strict": true,
		"schema": map[string]any{"type": "object", "properties": map[string]any{"title": map[string]any{"type": "string"}}}}}
	_, events, _ := post(t, s.URL, body)
	if got := events[4].data["delta"]; got != `{"title":"Say hello"}` {
		t.Errorf("title answer %q", got)
	}
	if len(s.Requests()) != 0 || len(s.TitleRequests()) != 1 {
		t.Errorf("turn requests %d, title requests %d", len(s.Requests()), len(s.TitleRequests()))
	}
}

func TestErrorsHaveOpenAIShape(t *testing.T) {
	for _, tc := range []struct {
		status     int
		typ, code  any
		scriptWord string
	}{
		{400, "invalid_request_error", nil, "SCN_400"},
		{401, "invalid_request_error", "invalid_api_key", "SCN_401"},
		{429, "requests", "rate_limit_exceeded", "SCN_429"},
		{500, "server_error", nil, "SCN_500"},
	} {
		s := New(t)
		s.Script(tc.scriptWord, Error(tc.status, "boom"))
		status, _, body := post(t, s.URL, turn(userMsg(tc.scriptWord)))
		e, _ := body["error"].(map[string]any)
		if status != tc.status || e["message"] != "boom" || e["type"] != tc.typ || e["code"] != tc.code {
			t.Errorf("%d: got %d %v", tc.status, status, body)
		}
		if _, ok := e["param"]; !ok {
			t.Errorf("%d: no param in %v", tc.status, e)
		}
	}
}

func TestSetUsageIsReported(t *testing.T) {
	s := New(t)
	s.SetUsage(&Usage{InputTokens: 5000, CachedInputTokens: 4000, OutputTokens: 300, ReasoningOutputTokens: 100})
	_, events, _ := post(t, s.URL, turn(userMsg("hi")))
	u := events[len(events)-1].data["response"].(map[string]any)["usage"].(map[string]any)
	if u["input_tokens"] != float64(5000) || u["total_tokens"] != float64(5300) ||
		u["input_tokens_details"].(map[string]any)["cached_tokens"] != float64(4000) ||
		u["output_tokens_details"].(map[string]any)["reasoning_tokens"] != float64(100) {
		t.Errorf("usage %v", u)
	}
}

func TestOtherRoutesAreLoggedAndRefused(t *testing.T) {
	s := New(t)
	resp, err := http.Get(s.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	all := s.AllRequests()
	if resp.StatusCode != 404 || len(all) != 1 || all[0].Path != "/v1/models" || all[0].Method != "GET" {
		t.Errorf("status %d, logged %+v", resp.StatusCode, all)
	}
}

func TestPatchRunsApplyPatchThroughTheShell(t *testing.T) {
	step := Patch("", "*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch\n")
	want := "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch\nEOF\n"
	if len(step.Calls) != 1 || step.Calls[0].Name != "exec_command" || step.Calls[0].Arguments.(map[string]any)["cmd"] != want {
		t.Errorf("patch step %+v", step)
	}
}

// An answer of a message and a call is one step: the next request gets the
// scenario's second step, not its end.
func TestStepsCountAnswersNotItems(t *testing.T) {
	s := New(t)
	s.Script("SCN_TWO_STEPS", Exec("First I look.", "ls"), Exec("", "pwd"))
	_, events, _ := post(t, s.URL, turn(userMsg("go SCN_TWO_STEPS"),
		map[string]any{"type": "message", "role": "assistant", "content": []any{map[string]any{"type": "output_text", "text": "First I look."}}},
		map[string]any{"type": "function_call", "call_id": "c1", "name": "exec_command", "arguments": `{"cmd":"ls"}`},
		map[string]any{"type": "function_call_output", "call_id": "c1", "output": "a.txt"}))
	var args []any
	for _, e := range events {
		if e.name == "response.function_call_arguments.done" {
			args = append(args, e.data["arguments"])
		}
	}
	if len(args) != 1 || args[0] != `{"cmd":"pwd"}` {
		t.Errorf("second step's calls %v; events %v", args, names(events))
	}
}

// Messages Codex writes in the user role (a Stop hook's <hook_prompt>) are
// not what the user typed: the scenario stays the typed one.
func TestCodexWrittenUserMessagesAreNotTyped(t *testing.T) {
	s := New(t)
	post(t, s.URL, turn(userMsg("typed SCN_A"), map[string]any{"type": "message", "role": "assistant",
		"content": []any{map[string]any{"type": "output_text", "text": "ok"}}},
		userMsg(`<hook_prompt hook_run_id="stop:10:/x">keep going</hook_prompt>`)))
	if got := s.Requests()[0].LastUserText; got != "typed SCN_A" {
		t.Errorf("LastUserText %q", got)
	}
}
