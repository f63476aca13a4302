package hook

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/state"
)

// codexContinuation is a Codex turn whose first reply ran a tool, then a
// message injected into the running turn (agents.md §1.7) with a reply of
// its own that runs a tool too. write(n) writes the rollout's first n
// lines; the hooks fire as Codex fires them in between.
type codexContinuation struct {
	r       *rig
	rollout string
	lines   []string
}

func newCodexContinuation(t *testing.T, r *rig) *codexContinuation {
	item := func(typ, id, text string) string {
		content := ""
		if text != "" {
			content = fmt.Sprintf(`,"content":[{"type":"text","text":%q}]`, text)
		}
		return fmt.Sprintf(`{"type":"event_msg","payload":{"type":"item_completed","turn_id":"t9","item":{"type":%q,"id":%q%s}}}`, typ, id, content)
	}
	// Codex writes a message as an item and as a response item.
	message := func(id, text string) string {
		return item("AgentMessage", id, text) + "\n" +
			fmt.Sprintf(`{"type":"response_item","payload":{"type":"message","role":"assistant","id":%q,"content":[{"type":"output_text","text":%q}]}}`, id, text)
	}
	user := func(id, text string) string {
		return fmt.Sprintf(`{"type":"response_item","payload":{"type":"message","role":"user","id":%q,"content":[{"type":"input_text","text":%q}]}}`, id, text) +
			"\n" + item("UserMessage", id, text)
	}
	call := func(id string) string {
		return fmt.Sprintf(`{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{}","call_id":%q}}`, id)
	}
	return &codexContinuation{r: r, rollout: filepath.Join(t.TempDir(), "rollout.jsonl"), lines: []string{
		`{"type":"session_meta","payload":{"id":"s1","cwd":"/p"}}`,
		`{"type":"event_msg","payload":{"type":"task_started","turn_id":"t9"}}`,
		user("u1", "first prompt"),
		message("m1", "Running echo."),
		call("call_1"), // 5
		item("CommandExecution", "call_1", ""),
		message("m2", "first done"), // 7: the first Stop
		user("u2", "second prompt"),
		message("m3", "Looking again."),
		call("call_2"), // 10
		item("CommandExecution", "call_2", ""),
		message("m4", "second done"), // 12: the second Stop
	}}
}

func (c *codexContinuation) write(t *testing.T, n int) {
	t.Helper()
	if err := os.WriteFile(c.rollout, []byte(strings.Join(c.lines[:n], "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

func (c *codexContinuation) fire(t *testing.T, prog Program, event, extra string) {
	t.Helper()
	runCodex(t, prog, c.r.root, "home-api", fmt.Sprintf(`{"session_id":"s1","turn_id":"t9","transcript_path":%q,"cwd":"/p","hook_event_name":%q,"model":"gpt-fake","permission_mode":"default"%s}`,
		c.rollout, event, extra))
}

func (c *codexContinuation) tool(t *testing.T, id string) {
	t.Helper()
	c.fire(t, PreTool, "PreToolUse", `,"tool_name":"Bash","tool_input":{"command":"echo"},"tool_use_id":"`+id+`"`)
	c.fire(t, PreTool, "PostToolUse", `,"tool_name":"Bash","tool_input":{"command":"echo"},"tool_response":"ok","tool_use_id":"`+id+`"`)
}

func (c *codexContinuation) stop(t *testing.T, last string) {
	t.Helper()
	c.fire(t, Stop, "Stop", `,"stop_hook_active":false,"last_assistant_message":"`+last+`"`)
}

// A continuation of a Codex turn (a message injected while Codex works)
// gets a live progress card of its own, as a Claude turn does: its tool
// calls are not dropped for the first reply's card having ended, and its
// Stop ends its card.
func TestCodexContinuationGetsItsOwnProgressCard(t *testing.T) {
	r := newRelay(t)
	quiet := on
	quiet.MirrorTerminal = false // the prompts are the person's from Discord
	r.setPrefs(t, nil, quiet)
	r.store.Sessions.Update(context.Background(), "home-api", func(s *state.Session) error { s.Progress = "live"; return nil })
	c := newCodexContinuation(t, r)
	c.write(t, 3)
	c.fire(t, Stop, "UserPromptSubmit", `,"prompt":"first prompt"`)
	c.write(t, 5)
	c.tool(t, "call_1")
	c.write(t, 7)
	c.stop(t, "first done")
	c.write(t, 8)
	c.fire(t, Stop, "UserPromptSubmit", `,"prompt":"second prompt"`)
	c.write(t, 10)
	c.tool(t, "call_2")
	acts, _ := state.OpenActivities(r.store.Dir)
	a, err := acts.Get("s1.t9@2")
	if err != nil || len(a.Items) != 2 || a.Items[0].Text != "Looking again." || a.Items[1].ToolUseID != "call_2" || !a.Ended.IsZero() {
		t.Fatalf("the continuation's activity %+v, %v", a, err)
	}
	if first, _ := acts.Get("s1.t9"); first.Ended.IsZero() || slices.ContainsFunc(first.Items, func(i state.ActivityItem) bool { return i.ToolUseID == "call_2" }) {
		t.Errorf("the first reply's activity %+v", first)
	}
	c.write(t, 12)
	c.stop(t, "second done")
	if a, _ := acts.Get("s1.t9@2"); a.Ended.IsZero() {
		t.Error("the continuation's activity did not end with its reply")
	}
	if got := r.waitContents(t, "both replies", func(got []string) bool { return len(got) == 2 }); !slices.Equal(got, []string{"first done", "second done"}) {
		t.Errorf("channel %q", got)
	}
}

// A continuation that runs long gets the long-turn ping, timed from the
// injected message, naming Codex; the quick first reply gets none.
func TestCodexLongContinuationPings(t *testing.T) {
	r := newRelay(t)
	owner := r.srv.NewUser("owner")
	quiet := on
	quiet.MirrorTerminal = false
	r.setPrefs(t, []string{owner.ID}, quiet)
	c := newCodexContinuation(t, r)
	c.write(t, 3)
	c.fire(t, Stop, "UserPromptSubmit", `,"prompt":"first prompt"`)
	c.write(t, 7)
	c.stop(t, "first done")
	c.write(t, 8)
	c.fire(t, Stop, "UserPromptSubmit", `,"prompt":"second prompt"`)
	if _, err := r.store.Seen.Get(turnStartKey("s1", "t9@2")); err != nil {
		t.Fatalf("the continuation's start was not recorded: %v", err)
	}
	if _, err := r.store.Seen.Update(context.Background(), turnStartKey("s1", "t9@2"), func(s *state.Seen) error {
		s.At = time.Now().Add(-6 * time.Minute)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	c.write(t, 12)
	c.stop(t, "second done")
	var pings []string
	for _, m := range r.srv.Messages(r.bot.ChannelID) {
		if len(r.srv.Mentioned(m.ID)) > 0 {
			pings = append(pings, m.Content)
		}
	}
	if len(pings) != 1 || !strings.HasPrefix(pings[0], "<@"+owner.ID+"> Codex is done (the turn ran 6m") {
		t.Errorf("pings %q, want one for the continuation", pings)
	}
}

// One Stop that ends both replies (the message was injected before the
// first reply was written) times the ping from the turn's own start.
func TestCodexOneStopForBothRepliesPingsFromTheTurnsStart(t *testing.T) {
	r := newRelay(t)
	owner := r.srv.NewUser("owner")
	quiet := on
	quiet.MirrorTerminal = false
	r.setPrefs(t, []string{owner.ID}, quiet)
	c := newCodexContinuation(t, r)
	c.write(t, 3)
	c.fire(t, Stop, "UserPromptSubmit", `,"prompt":"first prompt"`)
	if _, err := r.store.Seen.Update(context.Background(), turnStartKey("s1", "t9"), func(s *state.Seen) error {
		s.At = time.Now().Add(-6 * time.Minute)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	c.write(t, 8)
	c.fire(t, Stop, "UserPromptSubmit", `,"prompt":"second prompt"`)
	c.write(t, 12)
	c.stop(t, "second done")
	var pings []string
	for _, m := range r.srv.Messages(r.bot.ChannelID) {
		if len(r.srv.Mentioned(m.ID)) > 0 {
			pings = append(pings, m.Content)
		}
	}
	if len(pings) != 1 || !strings.HasPrefix(pings[0], "<@"+owner.ID+"> Codex is done (the turn ran 6m") {
		t.Errorf("pings %q, want one timed from the turn's start", pings)
	}
}
