package claudehook

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func decodeFixture(t *testing.T, name string) *Input {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in, err := Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return in
}

func TestFixturesDecode(t *testing.T) {
	cases := []struct {
		file  string
		check func(*Input) bool
	}{
		{"stop.json", func(in *Input) bool {
			return in.HookEventName == EventStop && in.PromptID != "" && in.LastAssistantMessage == "Final answer after tools: two"
		}},
		{"stop_failure.json", func(in *Input) bool {
			return in.HookEventName == EventStopFailure && in.LastAssistantMessage == "API Error: 400 fake bad request"
		}},
		{"pretooluse_bash.json", func(in *Input) bool {
			var b BashInput
			return json.Unmarshal(in.ToolInput, &b) == nil && b.Command == "touch touched.txt && echo touched-ok" && in.ToolUseID == "toolu_7c7f"
		}},
		{"pretooluse_write.json", func(in *Input) bool {
			var w WriteInput
			return json.Unmarshal(in.ToolInput, &w) == nil && w.Content == "hello world\n"
		}},
		{"pretooluse_edit.json", func(in *Input) bool {
			var e EditInput
			return json.Unmarshal(in.ToolInput, &e) == nil && e.OldString == "alpha" && e.NewString == "beta"
		}},
		{"pretooluse_ask.json", func(in *Input) bool {
			var a AskInput
			return json.Unmarshal(in.ToolInput, &a) == nil && len(a.Questions) == 2 && a.Questions[1].MultiSelect && a.Questions[0].Options[2].Label == "Blue"
		}},
		{"pretooluse_exitplan.json", func(in *Input) bool {
			var p PlanInput
			return json.Unmarshal(in.ToolInput, &p) == nil && strings.HasPrefix(p.Plan, "# Plan") && in.PermissionMode == "plan"
		}},
		{"permissionrequest_bash.json", func(in *Input) bool {
			s := in.PermissionSuggestions
			return in.ToolUseID == "" && len(s) == 2 && s[0].Directories[0] == "/home/u/proj" && s[1].Mode == "acceptEdits"
		}},
		{"permissionrequest_npm.json", func(in *Input) bool {
			s := in.PermissionSuggestions
			return len(s) == 1 && s[0].Rules[0].RuleContent == "npm test *" && s[0].Destination == "localSettings"
		}},
		{"posttooluse_bash.json", func(in *Input) bool {
			return in.ToolName == "Bash" && in.DurationMS == 42
		}},
		{"posttoolusefailure_bash.json", func(in *Input) bool { return strings.HasPrefix(in.Error, "Exit code 2") }},
		{"userpromptsubmit.json", func(in *Input) bool { return in.Prompt == "first line\nsecond line\nthird line" }},
		{"notification.json", func(in *Input) bool { return in.NotificationType == "permission_prompt" }},
		{"sessionstart_resume.json", func(in *Input) bool { return in.Source == "resume" && in.Model == "claude-opus-5-5" }},
		{"sessionend.json", func(in *Input) bool { return in.Reason == "prompt_input_exit" }},
	}
	for _, c := range cases {
		if in := decodeFixture(t, c.file); !c.check(in) {
			t.Errorf("%s decoded to %+v", c.file, in)
		}
	}
}

func TestDecodeRejectsGarbage(t *testing.T) {
	for _, s := range []string{"", "not json", `{"session_id":"x"}`} {
		if _, err := Decode(strings.NewReader(s)); err == nil {
			t.Errorf("Decode(%q) succeeded", s)
		}
	}
}

func TestPermissionRequestOutputShape(t *testing.T) {
	b, _ := json.Marshal(NewPermissionRequestOutput(Decision{Behavior: "allow", UpdatedPermissions: []PermissionUpdate{
		{Type: "addRules", Rules: []Rule{{ToolName: "Bash", RuleContent: "npm test *"}}, Behavior: "allow", Destination: "localSettings"}}}))
	want := `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedPermissions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"npm test *"}],"behavior":"allow","destination":"localSettings"}]}}}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

func TestFinalReplyTakesEveryBlockOfTheLastMessage(t *testing.T) {
	for _, last := range []string{"Part B of the final answer.", ""} {
		got, found, err := FinalReply(filepath.Join("testdata", "transcript_two_blocks.jsonl"), last, "")
		if err != nil || !found {
			t.Fatal(found, err)
		}
		if want := "Part A of the final answer.\n\nPart B of the final answer."; got != want {
			t.Fatalf("FinalReply(%q) = %q, want %q", last, got, want)
		}
	}
	if _, found, _ := FinalReply(filepath.Join("testdata", "transcript_two_blocks.jsonl"), "not written yet", ""); found {
		t.Error("found a message that is not in the transcript")
	}
}

// TestFinalReplyIgnoresFileOrder uses the order real Claude Code 2.1.328
// wrote: the final message's lines before the earlier message's, and the
// blocks of one message out of order.
func TestFinalReplyIgnoresFileOrder(t *testing.T) {
	got, found, err := FinalReply(filepath.Join("testdata", "transcript_out_of_order.jsonl"), "The command printed bash-ran.", "")
	if err != nil || !found || got != "First final block.\n\nThe command printed bash-ran." {
		t.Fatalf("FinalReply = %q, %v, %v", got, found, err)
	}
}

// Two turns ending with the same words: the second turn's final message
// is its own, never the first turn's, which comes before its prompt line
// (lines carry promptId; real 2.1.328 writes a turn's blocks out of order).
func TestFinalReplyIsThisTurns(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.jsonl")
	turn1 := `{"type":"user","promptId":"p1","message":{"role":"user","content":"first"}}
{"type":"assistant","apiBlockIndex":0,"message":{"id":"m1","stop_reason":"end_turn","content":[{"type":"text","text":"First turn's block."}]}}
{"type":"assistant","apiBlockIndex":1,"message":{"id":"m1","stop_reason":"end_turn","content":[{"type":"text","text":"Done."}]}}
{"type":"user","promptId":"p2","message":{"role":"user","content":"second"}}
`
	os.WriteFile(p, []byte(turn1), 0o600)
	if got, found, err := FinalReply(p, "Done.", "p2"); err != nil || found {
		t.Fatalf("the second turn took the first's message: %q, %v, %v", got, found, err)
	}
	if got, found, err := FinalReply(p, "Done.", "p1"); err != nil || !found || got != "First turn's block.\n\nDone." {
		t.Fatalf("first turn: %q, %v, %v", got, found, err)
	}
	turn2 := `{"type":"assistant","apiBlockIndex":1,"message":{"id":"m2","stop_reason":"end_turn","content":[{"type":"text","text":"Done."}]}}
{"type":"assistant","apiBlockIndex":0,"message":{"id":"m2","stop_reason":"end_turn","content":[{"type":"text","text":"Second turn's block."}]}}
{"type":"user","promptId":"p2","message":{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":"ok"}]}}
`
	os.WriteFile(p, []byte(turn1+turn2), 0o600)
	if got, found, err := FinalReply(p, "Done.", "p2"); err != nil || !found || got != "Second turn's block.\n\nDone." {
		t.Fatalf("second turn: %q, %v, %v", got, found, err)
	}
}

// TestFinalReplyReadsOnlyTheTail puts the answer after megabytes of earlier
// turns and a cut first line; the reply must still be exact.
func TestFinalReplyReadsOnlyTheTail(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.jsonl")
	var b strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&b, `{"type":"assistant","message":{"id":"old%d","content":[{"type":"text","text":"old %d %s"}]}}`+"\n", i, i, strings.Repeat("x", 100))
	}
	b.WriteString(`{"type":"user","message":{"role":"user","content":"next"}}` + "\n")
	b.WriteString(`{"type":"assistant","message":{"id":"new","content":[{"type":"text","text":"the answer"}]}}` + "\n")
	os.WriteFile(p, []byte(b.String()), 0o600)
	got, _, err := FinalReply(p, "the answer", "")
	if err != nil || got != "the answer" {
		t.Fatalf("FinalReply = %q, %v", got, err)
	}
}

func BenchmarkFinalReply10MiB(b *testing.B) {
	p := filepath.Join(b.TempDir(), "t.jsonl")
	var s strings.Builder
	for i := 0; s.Len() < 10<<20; i++ {
		fmt.Fprintf(&s, `{"type":"assistant","message":{"id":"m%d","content":[{"type":"text","text":"%s"}]}}`+"\n", i, strings.Repeat("y", 400))
	}
	s.WriteString(`{"type":"assistant","apiBlockIndex":0,"message":{"id":"final","stop_reason":"end_turn","content":[{"type":"text","text":"the end"}]}}` + "\n")
	os.WriteFile(p, []byte(s.String()), 0o600)
	b.Run("found", func(b *testing.B) {
		for b.Loop() {
			if _, found, err := FinalReply(p, "the end", ""); err != nil || !found {
				b.Fatal(found, err)
			}
		}
	})
	// Not written yet: the Stop hook's wait re-reads only after the file changes.
	b.Run("not-yet-written", func(b *testing.B) {
		for b.Loop() {
			if _, found, err := FinalReply(p, "absent", ""); err != nil || found {
				b.Fatal(found, err)
			}
		}
	})
}

func TestBridgeSettings(t *testing.T) {
	s := BridgeSettings("/opt/cc bin/ccbridge-hook-stop", "/opt/it's/ccbridge-hook-pretool", 30*time.Minute)
	var back Settings
	if err := json.Unmarshal(s.JSON(), &back); err != nil {
		t.Fatal(err)
	}
	// Stop is sync, so each turn's reply takes its place in the channel's
	// order before the next turn runs, and PreToolUse, so a tool call's
	// progress takes its place before the turn's Stop; posting is detached.
	for _, ev := range []string{"Stop", "StopFailure"} {
		stop := back.Hooks[ev][0].Hooks[0]
		if stop.Command != "'/opt/cc bin/ccbridge-hook-stop'" || stop.Async || stop.Timeout < 30 {
			t.Errorf("%s hook = %+v", ev, stop)
		}
	}
	if pre := back.Hooks["PreToolUse"][0].Hooks[0]; pre.Async || pre.Timeout < 30 {
		t.Errorf("progress hook = %+v", pre)
	}
	perm := back.Hooks["PermissionRequest"][0].Hooks[0]
	if perm.Command != `'/opt/it'\''s/ccbridge-hook-pretool'` || perm.Async || perm.Timeout != 31*60 {
		t.Errorf("PermissionRequest hook = %+v", perm)
	}
	if len(back.Hooks) != 11 {
		t.Errorf("%d events registered, want 11", len(back.Hooks))
	}
}

func TestTextBeforeAToolCall(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.jsonl")
	lines := []string{
		`{"type":"assistant","apiBlockIndex":1,"message":{"id":"m1","content":[{"type":"text","text":"Second text block."}]}}`,
		`{"type":"assistant","apiBlockIndex":0,"message":{"id":"m1","content":[{"type":"text","text":"First text block."}]}}`,
		`{"type":"assistant","apiBlockIndex":2,"message":{"id":"m1","content":[{"type":"tool_use","id":"toolu_A","name":"Bash","input":{}}]}}`,
		`{"type":"assistant","apiBlockIndex":3,"message":{"id":"m1","content":[{"type":"text","text":"After A."}]}}`,
		`{"type":"assistant","apiBlockIndex":4,"message":{"id":"m1","content":[{"type":"tool_use","id":"toolu_B","name":"Bash","input":{}}]}}`,
	}
	os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600)
	id, texts, found, err := TextBefore(p, "toolu_A")
	if err != nil || !found || id != "m1" || len(texts) != 2 || texts[0].Text != "First text block." || texts[1].Index != 1 {
		t.Fatalf("TextBefore(A) = %q %+v %v %v", id, texts, found, err)
	}
	_, texts, _, _ = TextBefore(p, "toolu_B")
	if len(texts) != 3 || texts[2].Text != "After A." {
		t.Fatalf("TextBefore(B) = %+v", texts)
	}
	if _, _, found, _ := TextBefore(p, "toolu_missing"); found {
		t.Error("found a missing call")
	}
}

// A session's rules reach Claude Code as permissions and every hook, as
// the shell Claude runs hook commands in passes them, intact.
func TestWithPolicyReachesTheHooksIntact(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "it's a hook")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nfor a; do printf '%s\\0' \"$a\"; done\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	p := SessionPolicy{Ask: []string{"Bash(git push *)"}, Deny: []string{`Bash(echo 'a' "b" $(x) \ *)`}, RedactOff: true, AuditDir: "/a b"}
	s := BridgeSettings(bin, bin, time.Minute).WithPolicy(p, []string{"Read(//run/ccbridge/bots/**)"})
	var back Settings
	if err := json.Unmarshal(s.Inline(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Permissions == nil || !slices.Equal(back.Permissions.Deny, []string{p.Deny[0], "Read(//run/ccbridge/bots/**)"}) || !slices.Equal(back.Permissions.Ask, p.Ask) {
		t.Errorf("permissions = %+v", back.Permissions)
	}
	if len(back.Hooks) != 11 {
		t.Errorf("%d events, want 11", len(back.Hooks))
	}
	for ev, ms := range back.Hooks {
		for _, m := range ms {
			for _, h := range m.Hooks {
				out, err := exec.Command("sh", "-c", h.Command).Output()
				if err != nil {
					t.Fatalf("%s: %s: %v", ev, h.Command, err)
				}
				got, ok, err := PolicyArg(strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00"))
				if !ok || err != nil || !reflect.DeepEqual(got, p) {
					t.Errorf("%s: %s gave %+v %v %v", ev, h.Command, got, ok, err)
				}
			}
		}
	}
	if _, ok, _ := PolicyArg([]string{"--policy", GlobalFlag}); ok {
		t.Error("a policy found in a global hook's arguments")
	}
	if BridgeSettings(bin, bin, time.Minute).WithPolicy(SessionPolicy{}, nil).Permissions != nil {
		t.Error("permissions without rules")
	}
}

// Rules go to Claude Code in the form it applies (as 2.1.328's startup
// warnings say), and never one it would stop the session's start over.
func TestWithPolicyWritesRulesClaudeApplies(t *testing.T) {
	p := SessionPolicy{Ask: []string{"Write(.env*)", "Glob(secrets/**)", "Edit(.env*)"}, Deny: []string{"WebFetch(example.com)", "WebFetch(domain:evil.com)", "NotebookEdit", "Bash(rm -rf *)"}}
	s := BridgeSettings("/b/s", "/b/p", time.Minute).WithPolicy(p, nil)
	if !slices.Equal(s.Permissions.Ask, []string{"Edit(.env*)", "Read(secrets/**)"}) {
		t.Errorf("ask = %q", s.Permissions.Ask)
	}
	if !slices.Equal(s.Permissions.Deny, []string{"WebFetch(domain:evil.com)", "NotebookEdit", "Bash(rm -rf *)"}) {
		t.Errorf("deny = %q", s.Permissions.Deny)
	}
	// The hooks still get every rule as written.
	got, _, _ := PolicyArg([]string{strings.ReplaceAll(strings.Trim(strings.TrimPrefix(s.Hooks[EventPreToolUse][1].Hooks[0].Command, "'/b/p' --policy "), "'"), `'\''`, "'")})
	if !reflect.DeepEqual(got, p) {
		t.Errorf("hook policy = %+v", got)
	}
}
