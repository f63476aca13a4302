package hook

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/state"
)

func run(t *testing.T, prog Program, root, session, stdin string) (stdout, stderr string, code int) {
	t.Helper()
	env := map[string]string{state.EnvRuntimeDir: root, state.EnvSession: session}
	var out, errb bytes.Buffer
	code = Main(context.Background(), prog, nil, strings.NewReader(stdin), &out, &errb, func(k string) string { return env[k] })
	return out.String(), errb.String(), code
}

func stopPayload(t *testing.T, transcript, last string) string {
	t.Helper()
	return `{"session_id":"sid-1","prompt_id":"pid-1","transcript_path":"` + transcript + `","cwd":"/p","hook_event_name":"Stop","last_assistant_message":"` + last + `"}`
}

func TestStopRecordsTheWholeFinalMessageOnce(t *testing.T) {
	root := filepath.Join(t.TempDir(), "rt")
	tr, _ := filepath.Abs(filepath.Join("..", "claudehook", "testdata", "transcript_two_blocks.jsonl"))
	for range 2 {
		out, _, code := run(t, Stop, root, "home-api", stopPayload(t, tr, "Part B of the final answer."))
		if code != 0 || out != "" {
			t.Fatalf("exit %d, stdout %q; want 0 and nothing", code, out)
		}
	}
	store, err := state.OpenStore(root)
	if err != nil {
		t.Fatal(err)
	}
	turns, _ := store.Turns.List()
	if len(turns) != 1 {
		t.Fatalf("%d turns recorded, want 1", len(turns))
	}
	turn := turns[state.TurnKey("sid-1", "pid-1")]
	if turn.Reply != "Part A of the final answer.\n\nPart B of the final answer." || turn.SessionKey != "home-api" {
		t.Fatalf("turn = %+v", turn)
	}
	sess, err := store.Sessions.Get("home-api")
	if err != nil || sess.ClaudeSessionID != "sid-1" || sess.LastEvent != "Stop" || sess.TranscriptPath != tr {
		t.Fatalf("session = %+v, %v", sess, err)
	}
}

func TestStopFallsBackWhenTranscriptNeverCatchesUp(t *testing.T) {
	root := filepath.Join(t.TempDir(), "rt")
	tr, _ := filepath.Abs(filepath.Join("..", "claudehook", "testdata", "transcript_two_blocks.jsonl"))
	run(t, Stop, root, "s", stopPayload(t, tr, "A newer answer"))
	store, _ := state.OpenStore(root)
	turn, err := store.Turns.Get(state.TurnKey("sid-1", "pid-1"))
	if err != nil || turn.Reply != "A newer answer" {
		t.Fatalf("turn = %+v, %v", turn, err)
	}
}

func TestStopFailureRecordsTheError(t *testing.T) {
	root := filepath.Join(t.TempDir(), "rt")
	in, _ := os.ReadFile(filepath.Join("..", "claudehook", "testdata", "stop_failure.json"))
	run(t, Stop, root, "s", string(in))
	store, _ := state.OpenStore(root)
	turns, _ := store.Turns.List()
	for _, turn := range turns {
		if turn.Event == "StopFailure" && turn.Reply == "API Error: 400 fake bad request" && turn.Error == "unknown" {
			return
		}
	}
	t.Fatalf("turns = %+v", turns)
}

func TestHooksFailOpen(t *testing.T) {
	root := filepath.Join(t.TempDir(), "rt")
	for name, stdin := range map[string]string{"garbage": "{{{", "empty": "", "no event": `{"session_id":"x"}`} {
		for _, prog := range []Program{Stop, PreTool} {
			out, _, code := run(t, prog, root, "s", stdin)
			if code != 0 || out != "" {
				t.Errorf("%s/%s: exit %d, stdout %q", prog, name, code, out)
			}
		}
	}
	log, _ := os.ReadFile(filepath.Join(root, "logs", "hook.log"))
	if !strings.Contains(string(log), "bad input") {
		t.Errorf("bad input not logged:\n%s", log)
	}
	// A runtime dir that cannot be used still exits 0.
	bad := filepath.Join(t.TempDir(), "bad")
	os.Mkdir(bad, 0o777)
	os.Chmod(bad, 0o777)
	if out, errs, code := run(t, Stop, bad, "s", "{}"); code != 0 || out != "" || !strings.Contains(errs, "unsafe") {
		t.Errorf("unsafe dir: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

func TestNoSessionIsIgnored(t *testing.T) {
	root := filepath.Join(t.TempDir(), "rt")
	tr, _ := filepath.Abs(filepath.Join("..", "claudehook", "testdata", "transcript_two_blocks.jsonl"))
	run(t, Stop, root, "", stopPayload(t, tr, "x"))
	store, _ := state.OpenStore(root)
	if turns, _ := store.Turns.List(); len(turns) != 0 {
		t.Fatalf("recorded %d turns for a session ccbridge did not start", len(turns))
	}
}

func TestPreToolTouchesSession(t *testing.T) {
	root := filepath.Join(t.TempDir(), "rt")
	in, _ := os.ReadFile(filepath.Join("..", "claudehook", "testdata", "pretooluse_bash.json"))
	out, _, code := run(t, PreTool, root, "home-api", string(in))
	if code != 0 || out != "" {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	store, _ := state.OpenStore(root)
	sess, err := store.Sessions.Get("home-api")
	if err != nil || sess.LastEvent != "PreToolUse" || sess.ClaudeSessionID != "s1" {
		t.Fatalf("session = %+v, %v", sess, err)
	}
}

// Claude's PostModelSwitch (seen on 2.1.328 after /model, once the switch
// is made) is counted on the session: it is how /model learns the switch.
func TestPostModelSwitchIsCounted(t *testing.T) {
	root := filepath.Join(t.TempDir(), "rt")
	in, _ := os.ReadFile(filepath.Join("..", "claudehook", "testdata", "postmodelswitch.json"))
	for range 2 {
		if out, _, code := run(t, Stop, root, "home-api", string(in)); code != 0 || out != "" {
			t.Fatalf("exit %d, stdout %q", code, out)
		}
	}
	store, _ := state.OpenStore(root)
	sess, err := store.Sessions.Get("home-api")
	if err != nil || sess.ModelSwitches != 2 || sess.SwitchRequested != "sonnet" {
		t.Fatalf("session = %+v, %v", sess, err)
	}
}
