package hook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/state"
)

// claudeStop ends turn prompt the way Claude Code runs the Stop hook as
// ccbridge registers it, and returns what is left to run of the hook,
// whenever the machine gets to it: with an async Stop, Claude waits for
// nothing and the whole hook is left; with a sync one, Claude waits for
// the hook's process and only the posting run it detached is left.
func (r *rig) claudeStop(t *testing.T, prompt, text string) (later func()) {
	t.Helper()
	reg := claudehook.BridgeSettings("stop", "pretool", time.Minute).Hooks[claudehook.EventStop][0].Hooks[0]
	if reg.Async {
		return func() { r.stop(t, prompt, text) }
	}
	prev := detach
	defer func() { detach = prev }()
	detach = func(ctx context.Context, args []string, input []byte, getenv Env) (postingRun, error) {
		run, err := prev(context.WithoutCancel(ctx), args, input, getenv) // it outlives the hook's process
		return postingRun{pid: run.pid, hand: func(order string) { later = func() { run.hand(order) } }}, err
	}
	r.stop(t, prompt, text)
	if later == nil {
		t.Fatal("Claude's wait for the Stop hook left nothing to run")
	}
	return later
}

// The tests run a Stop's posting run in-process, to the end, before the
// hook returns: as the hook did before it detached the run.
func init() { detach = inlinePostingRun }

func inlinePostingRun(ctx context.Context, args []string, input []byte, getenv Env) (postingRun, error) {
	prog := Stop
	if strings.Contains(string(input), `"hook_event_name":"PreToolUse"`) {
		prog = PreTool
	}
	return postingRun{pid: os.Getpid(), hand: func(order string) {
		var out bytes.Buffer
		Main(ctx, prog, args, io.MultiReader(bytes.NewReader(input), strings.NewReader(handoffTrailer(order))), &out, &out, getenv)
	}}, nil
}

// claudePreTool runs a PreToolUse as Claude Code runs the progress hook
// ccbridge registers, and returns what is left to run of it, whenever the
// machine gets to it (see claudeStop).
func (r *rig) claudePreTool(t *testing.T, payload string) (later func()) {
	t.Helper()
	reg := claudehook.BridgeSettings("stop", "pretool", time.Minute).Hooks[claudehook.EventPreToolUse][0].Hooks[0]
	pre := func() { run(t, PreTool, r.root, "home-api", payload) }
	if reg.Async {
		return pre
	}
	prev := detach
	defer func() { detach = prev }()
	detach = func(ctx context.Context, args []string, input []byte, getenv Env) (postingRun, error) {
		run, err := prev(context.WithoutCancel(ctx), args, input, getenv)
		return postingRun{pid: run.pid, hand: func(order string) { later = func() { run.hand(order) } }}, err
	}
	pre()
	if later == nil {
		t.Fatal("Claude's wait for the PreToolUse hook left nothing to run")
	}
	return later
}

// What Claude wrote before a tool call is posted before the turn's reply,
// however late the progress hook's process runs (a loaded machine runs
// hook processes in any order): its place is taken while Claude waits.
func TestProgressKeepsItsPlaceBeforeTheReply(t *testing.T) {
	r := newRelay(t)
	os.WriteFile(r.transcript, []byte(`{"type":"assistant","apiBlockIndex":0,"message":{"id":"m0","content":[{"type":"text","text":"Looking first."}]}}
{"type":"assistant","apiBlockIndex":1,"message":{"id":"m0","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}]}}
`), 0o600)
	progress := r.claudePreTool(t, fmt.Sprintf(`{"session_id":"sid","prompt_id":"p1","transcript_path":%q,"cwd":"/p","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"toolu_1"}`, r.transcript))
	reply := r.claudeStop(t, "p1", "All done.")
	done := make(chan struct{})
	go func() {
		defer close(done)
		reply()
	}()
	for deadline := time.Now().Add(placeWait); ; time.Sleep(time.Millisecond) {
		if _, err := r.store.Turns.Get(state.TurnKey("sid", "p1")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the reply's run never recorded its turn")
		}
	}
	progress()
	<-done
	if got := r.contents(); !slices.Equal(got, []string{"Looking first.", "All done."}) {
		t.Fatalf("channel holds %q, want the progress, then the reply", got)
	}
}

// Turn 1 ended before turn 2, but turn 2's hook gets to the channel first
// (a loaded machine runs hook processes in any order): turn 1's reply is
// still posted first, each reply once.
func TestRepliesKeepTurnOrderWhicheverHookRunsFirst(t *testing.T) {
	r := newRelay(t)
	first := r.claudeStop(t, "p1", "reply one")
	second := r.claudeStop(t, "p2", "reply two")
	done := make(chan struct{})
	go func() {
		defer close(done)
		second()
	}()
	// Turn 2's hook has its reply in hand (and its place in the order,
	// taken before) when turn 1's starts.
	for deadline := time.Now().Add(placeWait); ; time.Sleep(time.Millisecond) {
		if _, err := r.store.Turns.Get(state.TurnKey("sid", "p2")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("turn 2's hook never recorded its turn")
		}
	}
	first()
	<-done
	got := r.contents()
	if !slices.Equal(got, []string{"reply one", "reply two"}) {
		t.Fatalf("channel holds %q, want turn 1's reply, then turn 2's", got)
	}
}

// A turn interrupted (Esc: a prompt, never a Stop) holds nothing: the
// next turn's reply is posted as its hook runs.
func TestInterruptedTurnHoldsNoLaterReply(t *testing.T) {
	r := newRelay(t)
	// Both typed from Discord, as the daemon records them: nothing is
	// mirrored.
	if _, err := r.extras(t).Delivered.Update(context.Background(), "home-api", func(d *state.Delivered) error {
		d.Add("interrupted", time.Now())
		d.Add("next", time.Now())
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	r.event(t, promptPayload("p1", "interrupted"))
	r.event(t, promptPayload("p2", "next"))
	start := time.Now()
	r.claudeStop(t, "p2", "reply two")()
	if got := r.contents(); !slices.Equal(got, []string{"reply two"}) || time.Since(start) > placeWait/2 {
		t.Fatalf("after %v the channel holds %q", time.Since(start), got)
	}
}

// With progress off there is nothing to post, so no run is started: the
// hook Claude waits for records the call itself, at once (the session's
// last event, which the attention ping reads: a Notification left as the
// last event would ping "waiting for you" through a long tool call).
func TestPreToolUseWithProgressOffRecordsTheCall(t *testing.T) {
	r := newRelay(t)
	r.store.Sessions.Update(context.Background(), "home-api", func(s *state.Session) error {
		s.Progress, s.LastEvent = "off", claudehook.EventNotification
		return nil
	})
	prev := detach
	defer func() { detach = prev }()
	detach = func(context.Context, []string, []byte, Env) (postingRun, error) {
		t.Error("a posting run was started for a call with nothing to post")
		return postingRun{}, errors.New("no run")
	}
	run(t, PreTool, r.root, "home-api", fmt.Sprintf(`{"session_id":"sid","prompt_id":"p1","transcript_path":%q,"cwd":"/p","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"sleep 600"},"tool_use_id":"toolu_9"}`, r.transcript))
	if s, _ := r.store.Sessions.Get("home-api"); s.LastEvent != claudehook.EventPreToolUse {
		t.Fatalf("last event %q, want the tool call", s.LastEvent)
	}
}
