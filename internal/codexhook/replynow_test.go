package codexhook

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Which reply of a turn an event belongs to, as the rollout stands when
// it fires: the turn's prompt's until a message is injected after the
// model began, then the next one's. A UserPromptSubmit for a message
// injected into the running turn starts the next reply whether or not the
// rollout holds the message yet.
func TestReplyNow(t *testing.T) {
	lines, err := os.ReadFile("testdata/rollout-injected.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	all := strings.SplitAfter(string(lines), "\n")
	p := filepath.Join(t.TempDir(), "r.jsonl")
	at := func(n int, prompt string) int {
		t.Helper()
		if err := os.WriteFile(p, []byte(strings.Join(all[:n], "")), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := ReplyNow(p, "t9", prompt)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	for _, c := range []struct {
		lines  int
		prompt string
		want   int
	}{
		{3, "latency probe 9", 1},  // the turn's own prompt
		{3, "", 1},                 // a tool call of the first reply
		{4, "", 1},                 // the first reply written
		{4, "latency probe 10", 2}, // injected, not in the rollout yet
		{5, "latency probe 10", 2}, // injected, in the rollout
		{5, "", 2},                 // a tool call of the second reply
		{8, "", 2},
	} {
		if got := at(c.lines, c.prompt); got != c.want {
			t.Errorf("%d lines, prompt %q: reply %d, want %d", c.lines, c.prompt, got, c.want)
		}
	}
	if n, err := ReplyNow(p, "other", ""); err != nil || n != 1 {
		t.Errorf("another turn: %d, %v", n, err)
	}
}
