package claudehook

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRecent(t *testing.T) {
	lines := []string{
		`{"type":"user","message":{"role":"user","content":"first prompt"}}`,
		`{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"Line one.\nLine two."}]}}`,
		`{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}]}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"no","is_error":true}]}}`,
		`{"type":"assistant","isSidechain":true,"message":{"id":"s1","content":[{"type":"text","text":"subagent text"}]}}`,
		`{"type":"assistant","message":{"id":"m2","content":[{"type":"tool_use","id":"t2","name":"Write","input":{}}]}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"ok"}]}}`,
		`{"type":"assistant","message":{"id":"m3","content":[{"type":"tool_use","id":"t3","name":"Read","input":{}}]}}`,
		`{"type":"user","message":{"role":"user","content":"second prompt"}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"[Request interrupted by user]"}]}}`,
	}
	path := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := Recent(path, 1)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(a.Output, "|") != "Line two." {
		t.Errorf("output = %q", a.Output)
	}
	var tools []string
	for _, e := range a.Tools {
		tools = append(tools, e.Name+":"+e.Status)
	}
	if got := strings.Join(tools, ","); got != "Bash:error,Write:done,Read:running" {
		t.Errorf("tools = %s", got)
	}
	if a.Turns != 2 || !a.Interrupted {
		t.Errorf("turns %d, interrupted %v", a.Turns, a.Interrupted)
	}
}
