package hook

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/ccbridge/ccbridge/internal/state"
)

func TestLiveProgressRecordsTheTurnInsteadOfPosting(t *testing.T) {
	r := newRelay(t)
	ctx := context.Background()
	r.store.Sessions.Update(ctx, "home-api", func(s *state.Session) error { s.Progress = "live"; return nil })
	tr := r.transcript
	line := func(id, msg string, idx int, block string) string {
		return fmt.Sprintf(`{"type":"assistant","apiBlockIndex":%d,"message":{"id":%q,"content":[%s]}}`+"\n", idx, msg, block)
	}
	os.WriteFile(tr, []byte(line("", "m1", 0, `{"type":"text","text":"Let me look."}`)+line("", "m1", 1, `{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}`)), 0o600)
	pre := fmt.Sprintf(`{"session_id":"sid","prompt_id":"p1","transcript_path":%q,"cwd":"/p","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"toolu_1"}`, tr)
	if _, _, code := run(t, PreTool, r.root, "home-api", pre); code != 0 {
		t.Fatal(code)
	}
	perm := `{"session_id":"sid","prompt_id":"p1","cwd":"/p","hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"toolu_1","error":"Exit code 2"}`
	run(t, PreTool, r.root, "home-api", perm)
	acts, _ := state.OpenActivities(r.store.Dir)
	a, err := acts.Get("sid.p1")
	if err != nil || len(a.Items) != 2 || a.Items[0].Text != "Let me look." || a.Items[1].Tool != "🔧 Bash `ls`" || a.Items[1].State != state.ToolFailed || a.Items[1].End.IsZero() || a.Version < 2 {
		t.Fatalf("activity %+v, %v", a, err)
	}
	if got := r.contents(); len(got) != 0 {
		t.Errorf("live progress posted %q itself; the daemon draws it", got)
	}
	r.stop(t, "p1", "All done.")
	a, _ = acts.Get("sid.p1")
	if a.Ended.IsZero() {
		t.Error("the activity did not end with the reply")
	}
	if got := r.contents(); len(got) != 1 || got[0] != "All done." {
		t.Errorf("channel %q", got)
	}
	// A turn without tools leaves no activity.
	r.stop(t, "p2", "Quick.")
	if _, err := acts.Get("sid.p2"); err == nil {
		t.Error("an activity for a turn without tools")
	}
}
