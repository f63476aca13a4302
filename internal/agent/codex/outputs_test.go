package codex

import (
	"slices"
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/agent"
)

// The outputs folder is the one writable root ccbridge adds, and the
// instructions go in as a TOML string Codex parses back whole (quotes,
// backslashes, newlines); a session with neither gets neither.
func TestOutputsArgs(t *testing.T) {
	c := Codex{Command: "codex"}
	argv := c.Argv(agent.Spec{Outputs: "/rt/files/outputs/k", SystemPrompt: "save \"it\" in C:\\x\nthen say so", Model: "m"})
	i := slices.Index(argv, "--add-dir")
	if i < 0 || argv[i+1] != "/rt/files/outputs/k" {
		t.Errorf("argv %q", argv)
	}
	if !slices.Contains(argv, `developer_instructions="save \"it\" in C:\\x\u000Athen say so"`) {
		t.Errorf("instructions in %q", argv)
	}
	if !slices.Equal(argv[len(argv)-2:], []string{"--model", "m"}) {
		t.Errorf("--model is no longer last: %q", argv)
	}
	bare := strings.Join(c.Argv(agent.Spec{}), " ")
	if strings.Contains(bare, "--add-dir") || strings.Contains(bare, "developer_instructions") {
		t.Errorf("argv without outputs %q", bare)
	}
}
