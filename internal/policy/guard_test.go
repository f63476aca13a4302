package policy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// The policy hook runs this on every tool call of every session, Claude's
// and Codex's, synchronously: the guarded paths of a typical install
// against an everyday command.
func BenchmarkGuardedACommand(b *testing.B) {
	home := b.TempDir()
	rt := filepath.Join(b.TempDir(), "rt")
	cfg := filepath.Join(home, ".config", "ccbridge")
	if err := os.MkdirAll(cfg, 0o700); err != nil {
		b.Fatal(err)
	}
	paths := []string{rt + "/bots/", rt + "/sessions/", cfg + "/", filepath.Join(home, ".config", "ccbridge", "service.env"), filepath.Join(home, ".local", "state", "ccbridge", "audit") + "/"}
	vars := []string{"CCBRIDGE_RUNTIME_DIR", "CCBRIDGE_CONFIG"}
	in, _ := json.Marshal(map[string]any{"command": `cd /work/app && git -C . status --porcelain | grep -rv '^??' src > /tmp/out.txt; sh -c "npm test -- --watch=false" 2>&1 | tail -n 20`, "description": "Run the tests"})
	c := Call{Tool: "Bash", Input: in, Cwd: b.TempDir(), Home: home}
	for b.Loop() {
		if p := Guarded(c, paths, vars); p != "" {
			b.Fatalf("refused: %s", p)
		}
	}
}
