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

// writeRollout makes a Codex rollout as 0.171.0 writes it (agents.md
// §1.5): a session_meta line as large as Codex's (its base instructions),
// then turns prompts, each answered by two messages after pad tool calls.
func writeRollout(t testing.TB, sessions, cwd, id, source string, turns, pad int, mod time.Time) string {
	t.Helper()
	dir := filepath.Join(sessions, mod.Format("2006/01/02"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	line := func(typ string, payload map[string]any) {
		raw, _ := json.Marshal(map[string]any{"timestamp": mod.UTC().Format(time.RFC3339Nano), "type": typ, "payload": payload})
		b.Write(raw)
		b.WriteByte('\n')
	}
	item := func(turn, typ, text string) {
		line("event_msg", map[string]any{"type": "item_completed", "turn_id": turn, "item": map[string]any{"type": typ, "id": "i",
			"content": []any{map[string]any{"type": "text", "text": text}}}})
	}
	// session_meta in Codex's own order: its cwd first, its instructions
	// (some 20 KB) last.
	cwdJSON, _ := json.Marshal(cwd)
	fmt.Fprintf(&b, `{"timestamp":%q,"ordinal":0,"type":"session_meta","payload":{"session_id":%q,"id":%q,"cwd":%s,"originator":"codex-tui","cli_version":"0.171.0","thread_source":%q,"base_instructions":{"text":%q}}}`+"\n",
		mod.UTC().Format(time.RFC3339Nano), id, id, cwdJSON, source, strings.Repeat("You are Codex. ", 1500))
	// Codex's own developer and context messages come before the first
	// prompt, some 40 KB of them.
	line("response_item", map[string]any{"type": "message", "role": "developer", "content": []any{map[string]any{"type": "input_text", "text": strings.Repeat("skills ", 3000)}}})
	for i := 1; i <= turns; i++ {
		turn := fmt.Sprintf("t%d", i)
		line("event_msg", map[string]any{"type": "task_started", "turn_id": turn})
		line("response_item", map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": fmt.Sprintf("prompt %d of %s", i, id)}}})
		item(turn, "UserMessage", fmt.Sprintf("prompt %d of %s", i, id))
		for range pad {
			item(turn, "CommandExecution", strings.Repeat("y", 400))
		}
		item(turn, "AgentMessage", fmt.Sprintf("reply %d of %s", i, id))
		item(turn, "AgentMessage", "and more")
		line("event_msg", map[string]any{"type": "task_complete", "turn_id": turn, "last_agent_message": "and more"})
	}
	p := filepath.Join(dir, "rollout-"+mod.Format("2006-01-02T15-04-05")+"-"+id+".jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, mod, mod); err != nil {
		t.Fatal(err)
	}
	return p
}

const (
	cxShort = "01a222e3-a253-77e3-89c2-c2978228edc7"
	cxLong  = "01a222e3-a253-77e3-89c2-c2978228edc8"
	cxOther = "01a222e3-a253-77e3-89c2-c2978228edc9"
	cxOld   = "01a222e3-a253-77e3-89c2-c2978228edca"
	cxTitle = "01a222e3-a253-77e3-89c2-c2978228edcb"
)

func TestCodexListNewestFirstWithinTheTree(t *testing.T) {
	sessions := t.TempDir()
	now := time.Now()
	writeRollout(t, sessions, "/home/u/app", cxShort, "user", 2, 0, now.Add(-time.Hour))
	writeRollout(t, sessions, "/home/u/app/sub", cxLong, "user", 30, 40, now.Add(-30*time.Minute)) // far beyond the tail
	writeRollout(t, sessions, "/home/u/app2", cxOther, "user", 1, 0, now)                          // not in the tree
	writeRollout(t, sessions, "/home/u/app", cxOld, "user", 1, 0, now.Add(-48*time.Hour))          // another day's folder
	writeRollout(t, sessions, "/home/u/app", cxTitle, "thread_title", 1, 0, now)                   // Codex's own title thread
	list, err := ListCodex(sessions, "/home/u/app", 3)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range list {
		ids = append(ids, c.ID)
	}
	if strings.Join(ids, ",") != cxLong+","+cxShort+","+cxOld {
		t.Fatalf("listed %v", ids)
	}
	long := list[0]
	if long.FirstPrompt != "prompt 1 of "+cxLong || long.LastPrompt != "prompt 30 of "+cxLong ||
		long.LastReply != "reply 30 of "+cxLong+"\n\nand more" || long.Cwd != "/home/u/app/sub" || long.AgentName != "codex" || long.Turns < 1 {
		t.Errorf("long conversation read as %+v", long)
	}
	if s := list[1]; s.Turns != 2 || s.FirstPrompt != "prompt 1 of "+cxShort {
		t.Errorf("short conversation read as %+v", s)
	}
	if all, _ := ListCodex(sessions, "", 10); len(all) != 4 {
		t.Errorf("every folder: %d conversations, want 4", len(all))
	}
	if none, err := ListCodex(filepath.Join(sessions, "missing"), "", 10); err != nil || len(none) != 0 {
		t.Errorf("no sessions folder: %v, %v", none, err)
	}
}

// A rollout far longer than what is read of it: the first prompt from its
// head, the last exchange from its tail.
func TestCodexReadsHeadAndTailOfALongRollout(t *testing.T) {
	sessions := t.TempDir()
	p := writeRollout(t, sessions, "/w", cxLong, "user", 200, 20, time.Now())
	info, _ := os.Stat(p)
	if info.Size() < 2*(headBytesCodex+tailMax) {
		t.Fatalf("rollout of %d bytes is too short for the test", info.Size())
	}
	c, err := ReadCodex(p)
	if err != nil || c.FirstPrompt != "prompt 1 of "+cxLong || c.LastPrompt != "prompt 200 of "+cxLong || c.LastReply != "reply 200 of "+cxLong+"\n\nand more" {
		t.Errorf("read %+v, %v", c, err)
	}
}

func TestCodexFind(t *testing.T) {
	sessions := t.TempDir()
	writeRollout(t, sessions, "/home/u/app", cxShort, "user", 1, 0, time.Now().Add(-72*time.Hour))
	if c, ok := FindCodex(sessions, "/home/u/app", cxShort); !ok || c.ID != cxShort || c.FirstPrompt == "" || c.Modified.IsZero() {
		t.Errorf("found %+v, %v", c, ok)
	}
	if _, ok := FindCodex(sessions, "/home/u/other", cxShort); ok {
		t.Error("found in another folder")
	}
	for _, bad := range []string{"", "../x", "*", cxShort[:8], "01a222e3-a253-77e3-89c2-c2978228edc?"} {
		if _, ok := FindCodex(sessions, "", bad); ok {
			t.Errorf("found %q", bad)
		}
	}
}

// The folder of a rollout is read from its first bytes, escapes and all.
func TestRolloutCwd(t *testing.T) {
	sessions := t.TempDir()
	p := writeRollout(t, sessions, `/home/u/a "q" \ b`, cxShort, "user", 1, 0, time.Now())
	if cwd, ok := rolloutCwd(p); !ok || cwd != `/home/u/a "q" \ b` {
		t.Errorf("cwd %q, %v", cwd, ok)
	}
	other := filepath.Join(sessions, "x.jsonl")
	os.WriteFile(other, []byte(`{"type":"event_msg","payload":{"cwd":"/x"}}`+"\n"), 0o600)
	if _, ok := rolloutCwd(other); ok {
		t.Error("a cwd read from a line that is no session_meta")
	}
}
