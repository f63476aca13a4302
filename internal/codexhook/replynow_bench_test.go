package codexhook

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every Codex tool call's hook asks which reply of its turn it belongs to
// (ReplyNow), in a process Codex waits for: a 10 MiB rollout of earlier
// turns, the current turn at its end.
func BenchmarkReplyNow10MiB(b *testing.B) {
	path := filepath.Join(b.TempDir(), "rollout.jsonl")
	var sb strings.Builder
	for i := 0; sb.Len() < 10<<20; i++ {
		fmt.Fprintf(&sb, `{"type":"event_msg","payload":{"type":"item_completed","turn_id":"old-%d","item":{"type":"AgentMessage","text":%q}}}`+"\n", i, strings.Repeat("x", 400))
	}
	sb.WriteString(`{"type":"event_msg","payload":{"type":"item_completed","turn_id":"now","item":{"type":"AgentMessage","text":"working"}}}` + "\n")
	if err := os.WriteFile(path, []byte(sb.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if n, err := ReplyNow(path, "now", ""); err != nil || n != 1 {
			b.Fatalf("reply %d, %v", n, err)
		}
	}
}
