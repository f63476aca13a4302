package codexhook

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// claude_status's recent output of a Codex session: the model's messages
// (newest last, as lines), its tool calls with how they went, the prompts
// people typed, and an Escape (turn_aborted) after the last of them.
func TestRecentIsTheRolloutsLastMessagesAndTools(t *testing.T) {
	a, err := Recent("testdata/rollout.jsonl", 20)
	if err != nil {
		t.Fatal(err)
	}
	if a.Turns != 1 || a.Interrupted {
		t.Errorf("turns %d, interrupted %v", a.Turns, a.Interrupted)
	}
	if len(a.Output) == 0 || a.Output[0] != "Running echo." {
		t.Errorf("output %q", a.Output)
	}
	if len(a.Tools) == 0 || a.Tools[0].Name != "Bash" || a.Tools[0].Status != "done" || a.Tools[0].ID != "call_fake_1_0" {
		t.Errorf("tools %+v", a.Tools)
	}
	// The newest lines when asked for fewer.
	few, _ := Recent("testdata/rollout.jsonl", 1)
	if len(few.Output) != 1 || few.Output[0] != a.Output[len(a.Output)-1] {
		t.Errorf("1 line: %q of %q", few.Output, a.Output)
	}

	p := filepath.Join(t.TempDir(), "r.jsonl")
	rollout := strings.Join([]string{
		`{"type":"event_msg","payload":{"type":"item_completed","turn_id":"t1","item":{"type":"UserMessage","content":[{"type":"text","text":"run it"}]}}}`,
		`{"type":"event_msg","payload":{"type":"item_completed","turn_id":"t1","item":{"type":"AgentMessage","content":[{"type":"Text","text":"Line one.\nLine two."}]}}}`,
		`{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{}","call_id":"c1"}}`,
		`{"type":"event_msg","payload":{"type":"item_completed","turn_id":"t1","item":{"type":"CommandExecution","id":"c1","exit_code":2}}}`,
		`{"type":"response_item","payload":{"type":"function_call","name":"apply_patch","arguments":"{}","call_id":"c2"}}`,
		`{"type":"event_msg","payload":{"type":"turn_aborted","turn_id":"t1","reason":"interrupted"}}`,
		`{"type":"event_msg","payload":{"type":"item_completed","turn_id":"t2","item":{"type":"UserMessage","content":[{"type":"text","text":"<hook_prompt>x</hook_prompt>"}]}}}`,
		`{"type":"event_msg","payload":{"type":"item_co`, // half written
	}, "\n")
	if err := os.WriteFile(p, []byte(rollout), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err = Recent(p, 20)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Output, []string{"Line one.", "Line two."}) || a.Turns != 1 || !a.Interrupted {
		t.Errorf("activity %+v", a)
	}
	if len(a.Tools) != 2 || a.Tools[0].Status != "error" || a.Tools[1].Name != "apply_patch" || a.Tools[1].Status != "running" {
		t.Errorf("tools %+v", a.Tools)
	}
	if _, err := Recent(filepath.Join(t.TempDir(), "none.jsonl"), 5); err == nil {
		t.Error("no error for a missing rollout")
	}
}
