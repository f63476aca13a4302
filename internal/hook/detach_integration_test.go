//go:build integration

package hook

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/state"
)

// The real ccbridge-hook-stop, run as Claude runs a sync Stop hook: it
// returns (its stdout and stderr closed) while the run it detached, in a
// session of its own, still holds the reply's place; that run posts the
// reply once and gives the place up when it is done.
func TestStopHookDetachesThePostingRun(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "ccbridge-hook-stop")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/hook-stop").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	r := newRelay(t)
	// The final message is not in the transcript yet: the run posts
	// last_assistant_message and waits for the rest.
	if err := os.WriteFile(r.transcript, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	payload := fmt.Sprintf(`{"session_id":"sid","prompt_id":"p1","transcript_path":%q,"cwd":"/p","hook_event_name":"Stop","last_assistant_message":"The answer."}`, r.transcript)
	cmd := exec.Command(bin)
	cmd.Stdin = strings.NewReader(payload)
	cmd.Env = append(os.Environ(), state.EnvRuntimeDir+"="+r.root, state.EnvSession+"=home-api")
	if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 { // returns once stdout and stderr close
		t.Fatalf("hook: %v, output %q", err, out)
	}
	places, err := state.OpenPlaces(r.store.Dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	channel := r.bot.ChannelID
	r.waitContents(t, "the detached run's reply", func(got []string) bool { return slices.Equal(got, []string{"The answer."}) })
	if places.First(ctx, channel, "") == "" {
		t.Fatal("the reply's place is not held while its run waits for the transcript")
	}
	pid := detachedPID(t, r.root)
	if pid == cmd.Process.Pid {
		t.Fatal("the hook Claude waited for posted the reply itself")
	}
	if sid := sessionOf(t, pid); sid != pid {
		t.Errorf("the posting run is in session %d, not one of its own", sid)
	}
	r.writeFinal(t, "m-p1", "The answer.")
	for deadline := time.Now().Add(2 * transcriptWait); places.First(ctx, channel, "") != ""; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the posting run never gave its place up")
		}
	}
	if got := r.contents(); !slices.Equal(got, []string{"The answer."}) {
		t.Fatalf("channel holds %q", got)
	}
}

// The real ccbridge-hook-pretool, run as Claude runs its sync PreToolUse
// hook: it returns at once, and the run it detached posts what Claude
// wrote before the call.
func TestPreToolHookDetachesTheProgressRun(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "ccbridge-hook-pretool")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/hook-pretool").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	r := newRelay(t)
	if err := os.WriteFile(r.transcript, []byte(`{"type":"assistant","apiBlockIndex":0,"message":{"id":"m0","content":[{"type":"text","text":"Looking first."}]}}
{"type":"assistant","apiBlockIndex":1,"message":{"id":"m0","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}]}}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	payload := fmt.Sprintf(`{"session_id":"sid","prompt_id":"p1","transcript_path":%q,"cwd":"/p","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"toolu_1"}`, r.transcript)
	cmd := exec.Command(bin)
	cmd.Stdin = strings.NewReader(payload)
	cmd.Env = append(os.Environ(), state.EnvRuntimeDir+"="+r.root, state.EnvSession+"=home-api")
	if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
		t.Fatalf("hook: %v, output %q", err, out)
	}
	r.waitContents(t, "the detached run's progress", func(got []string) bool { return slices.Equal(got, []string{"Looking first."}) })
	if pid := detachedPID(t, r.root); pid == cmd.Process.Pid {
		t.Fatal("the hook Claude waited for posted the progress itself")
	}
}

// detachedPID is the pid of the posting run the Stop hook logged.
func detachedPID(t *testing.T, root string) int {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "logs", "hook.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l struct {
			Msg    string `json:"msg"`
			RunPID int    `json:"run_pid"`
		}
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.Msg == "post detached" {
			return l.RunPID
		}
	}
	t.Fatal("no post detached in hook.log")
	return 0
}

// sessionOf reads a process's session id from /proc.
func sessionOf(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// pid (comm) state ppid pgrp session ...
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	sid, err := strconv.Atoi(f[3])
	if err != nil {
		t.Fatal(err)
	}
	return sid
}
