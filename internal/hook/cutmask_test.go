package hook

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/claudehook"
)

// A progress line shows no part of a secret at its 180-character cut: it
// is masked before it is cut (security-2.md finding 9).
func TestToolLineMasksBeforeTheCut(t *testing.T) {
	tok := "ghp_" + strings.Repeat("A1b2C3d4E5", 4)[:36]
	for pad := 140; pad < 180; pad += 3 {
		in, _ := json.Marshal(map[string]string{"command": "echo " + strings.Repeat("x", pad) + " " + tok + " done"})
		line := toolLine(&claudehook.Input{ToolName: "Bash", ToolInput: in})
		if strings.Contains(line, "ghp_A1b2") {
			t.Fatalf("the token's head is on the progress line: %q", line)
		}
	}
}
