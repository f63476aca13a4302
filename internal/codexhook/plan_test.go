package codexhook

import (
	"os"
	"path/filepath"
	"testing"
)

// The plan item as Codex 0.171.0 wrote it in Plan mode.
func TestPlanOf(t *testing.T) {
	rollout := filepath.Join(t.TempDir(), "r.jsonl")
	lines := `{"timestamp":"2026-11-28T16:29:10.820Z","ordinal":9,"type":"event_msg","payload":{"type":"item_completed","thread_id":"th","turn_id":"t1","item":{"type":"Plan","id":"p1","text":"1. Do A\n2. Do B\n"},"started_at_ms":1,"completed_at_ms":1}}
{"timestamp":"2026-11-28T16:29:10.824Z","ordinal":11,"type":"response_item","payload":{"type":"message","status":"completed","id":"m","role":"assistant","content":[{"type":"output_text","text":"Here is the plan.\n\n<proposed_plan>\n1. Do A\n2. Do B\n</proposed_plan>"}]}}
`
	if err := os.WriteFile(rollout, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	if plan, found, err := PlanOf(rollout, "t1"); err != nil || !found || plan != "1. Do A\n2. Do B\n" {
		t.Errorf("plan %q, %v, %v", plan, found, err)
	}
	if _, found, _ := PlanOf(rollout, "t2"); found {
		t.Error("another turn's plan")
	}
}
