package history

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// write makes a transcript of turns prompts, each answered, padded with
// tool lines so that it is long.
func write(t testing.TB, projects, cwd, id string, turns, pad int, mod time.Time) string {
	t.Helper()
	dir := filepath.Join(projects, Escape(cwd))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	line := func(v map[string]any) {
		v["cwd"], v["sessionId"] = cwd, id
		raw, _ := json.Marshal(v)
		b.Write(raw)
		b.WriteByte('\n')
	}
	line(map[string]any{"type": "permission-mode", "permissionMode": "default"})
	for i := 1; i <= turns; i++ {
		line(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": fmt.Sprintf("prompt %d of %s", i, id)},
			"turnPosition": map[string]any{"promptIndex": i, "turnIndex": i}})
		for range pad {
			line(map[string]any{"type": "assistant", "message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "t", "name": "Bash", "input": map[string]any{"command": strings.Repeat("x", 200)}}}}})
			line(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "t", "content": strings.Repeat("y", 300)}}}})
		}
		line(map[string]any{"type": "assistant", "message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": fmt.Sprintf("reply %d of %s", i, id)}}}})
		line(map[string]any{"type": "system", "subtype": "turn_duration"})
	}
	p := filepath.Join(dir, id+".jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, mod, mod); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestListNewestFirstWithinTheTree(t *testing.T) {
	projects := t.TempDir()
	now := time.Now()
	write(t, projects, "/home/u/app", "short", 2, 0, now.Add(-time.Hour))
	write(t, projects, "/home/u/app/sub", "long", 30, 40, now) // far beyond the tail: the head gives the first prompt
	write(t, projects, "/home/u/app2", "other", 1, 0, now)     // not in the tree, though its folder name starts alike
	write(t, projects, "/home/u/app", "old", 1, 0, now.Add(-2*time.Hour))
	list, err := List(projects, "/home/u/app", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != "long" || list[1].ID != "short" {
		t.Fatalf("list = %+v", list)
	}
	l := list[0]
	if l.FirstPrompt != "prompt 1 of long" || l.LastPrompt != "prompt 30 of long" || l.LastReply != "reply 30 of long" || l.Turns != 30 || l.Cwd != "/home/u/app/sub" {
		t.Fatalf("long = %+v", l)
	}
	if s := list[1]; s.FirstPrompt != "prompt 1 of short" || s.Turns != 2 {
		t.Fatalf("short = %+v", s)
	}
	if c, ok := Find(projects, "/home/u/app", "old"); !ok || c.LastReply != "reply 1 of old" {
		t.Fatalf("Find = %+v %v", c, ok)
	}
	if _, ok := Find(projects, "/home/u/app", "../x"); ok {
		t.Fatal("Find accepted a path")
	}
}

// With no tree, every directory's conversations are listed and found.
func TestListAndFindEverywhere(t *testing.T) {
	projects := t.TempDir()
	now := time.Now()
	write(t, projects, "/home/u/app", "a", 1, 0, now.Add(-time.Hour))
	write(t, projects, "/srv/other", "b", 1, 0, now)
	list, err := List(projects, "", 10)
	if err != nil || len(list) != 2 || list[0].ID != "b" || list[1].ID != "a" || list[0].Cwd != "/srv/other" {
		t.Fatalf("list = %+v, %v", list, err)
	}
	if c, ok := Find(projects, "", "a"); !ok || c.Cwd != "/home/u/app" {
		t.Fatalf("Find = %+v %v", c, ok)
	}
	if _, ok := Find(projects, "", "*"); ok {
		t.Fatal("Find took a pattern")
	}
}

// Claude records an interrupt as a user line; it is not the last prompt.
func TestInterruptIsNotAPrompt(t *testing.T) {
	projects := t.TempDir()
	p := write(t, projects, "/home/u/app", "i", 1, 0, time.Now())
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"user","cwd":"/home/u/app","message":{"role":"user","content":[{"type":"text","text":"[Request interrupted by user]"}]}}` + "\n")
	f.Close()
	c, err := Read(p)
	if err != nil || c.LastPrompt != "prompt 1 of i" || c.Turns != 1 {
		t.Fatalf("Read = %+v, %v", c, err)
	}
}

// BenchmarkList lists the newest 10 of 500 conversations, each long
// (about 200 kB, ten turns of thirty tool calls): only their tails and heads are read.
func BenchmarkList(b *testing.B) {
	projects := b.TempDir()
	now := time.Now()
	for i := range 500 {
		write(b, projects, fmt.Sprintf("/home/u/app/d%d", i%20), fmt.Sprintf("conv%03d", i), 10, 30, now.Add(-time.Duration(i)*time.Minute))
	}
	b.ResetTimer()
	for b.Loop() {
		list, err := List(projects, "/home/u/app", 10)
		if err != nil || len(list) != 10 || list[0].ID != "conv000" {
			b.Fatalf("list = %d %v", len(list), err)
		}
	}
}

// A last turn longer than the first tail read is still found.
func TestLongLastTurn(t *testing.T) {
	projects := t.TempDir()
	p := write(t, projects, "/w", "big", 3, 200, time.Now())
	c, err := Read(p)
	if err != nil || c.LastPrompt != "prompt 3 of big" || c.FirstPrompt != "prompt 1 of big" || c.Turns != 3 || c.LastReply != "reply 3 of big" {
		t.Fatalf("%+v %v", c, err)
	}
}
