package session

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/state"
)

const codexApprovalAlways = "  Would you like to run the following command?\n  $ touch x\n› 1. Yes, proceed (y)\n" +
	"  2. Yes, and don't ask again for commands that start with `touch` (p)\n  3. No, and tell Codex what to do differently (esc)\n  Press enter to confirm or esc to cancel\n"

// A decided Codex card is pressed into its own session's dialog only while
// that dialog asks about the card's command: Always is the dialog's "2"
// and reports Codex's prefix; another command's dialog gets nothing.
func TestPressAnswerOnlyIntoItsDialog(t *testing.T) {
	m, panes, target := newCodexManager(t)
	ctx := context.Background()
	if _, _, err := m.Ensure(ctx, target); err != nil {
		t.Fatal(err)
	}
	decided := func(always bool, behavior string) state.Request {
		d, _ := json.Marshal(map[string]string{"behavior": behavior})
		return state.Request{Session: target.Key, Keys: "codex", Status: state.RequestDecided, ToolName: "Bash",
			ToolInput: json.RawMessage(`{"command":"touch x","description":"why"}`), Decision: d, Always: always}
	}
	panes.mu.Lock()
	panes.screen, panes.ops = codexApprovalAlways, nil
	panes.mu.Unlock()
	prefix, err := m.PressAnswer(ctx, decided(true, "allow"), "")
	if err != nil || prefix != "touch" {
		t.Fatalf("Always: %q, %v", prefix, err)
	}
	panes.mu.Lock()
	ops := slices.Clone(panes.ops)
	panes.screen, panes.ops = strings.ReplaceAll(codexApprovalAlways, "touch x", "rm -rf y"), nil
	panes.mu.Unlock()
	if !slices.ContainsFunc(ops, func(o string) bool { return strings.HasSuffix(o, " 2") && strings.HasPrefix(o, "keys ") }) {
		t.Errorf("ops %q, want the key 2", ops)
	}
	keyedDialogWait = 300 * time.Millisecond
	t.Cleanup(func() { keyedDialogWait = 10 * time.Second })
	if _, err := m.PressAnswer(ctx, decided(false, "allow"), ""); !errors.Is(err, ErrDialogUnseen) {
		t.Errorf("another command's dialog: %v", err)
	}
	panes.mu.Lock()
	defer panes.mu.Unlock()
	for _, o := range panes.ops {
		if strings.HasPrefix(o, "keys ") {
			t.Errorf("a key pressed into another command's dialog: %q", panes.ops)
		}
	}
}

// The card of `git push` is not the dialog of `git push --force origin
// main` (parallel tool calls: both may be pending): nothing is pressed, and
// a dialog never seen is not one answered in the terminal.
func TestPressAnswerNotIntoALongerCommandsDialog(t *testing.T) {
	m, panes, target := newCodexManager(t)
	ctx := context.Background()
	if _, _, err := m.Ensure(ctx, target); err != nil {
		t.Fatal(err)
	}
	keyedDialogWait = 300 * time.Millisecond
	t.Cleanup(func() { keyedDialogWait = 10 * time.Second })
	d, _ := json.Marshal(map[string]string{"behavior": "allow"})
	req := state.Request{Session: target.Key, Keys: "codex", Status: state.RequestDecided, ToolName: "Bash",
		ToolInput: json.RawMessage(`{"command":"git push"}`), Decision: d}
	panes.mu.Lock()
	panes.screen, panes.ops = strings.ReplaceAll(codexApprovalAlways, "touch x", "git push --force origin main"), nil
	panes.mu.Unlock()
	_, err := m.PressAnswer(ctx, req, "")
	if !errors.Is(err, ErrDialogUnseen) || errors.Is(err, ErrDialogGone) {
		t.Errorf("err = %v, want ErrDialogUnseen", err)
	}
	panes.mu.Lock()
	defer panes.mu.Unlock()
	for _, o := range panes.ops {
		if strings.HasPrefix(o, "keys ") {
			t.Errorf("a key pressed into the longer command's dialog: %q", panes.ops)
		}
	}
}

// Always whose prefix is only a shell would let Codex run anything in
// every project: nothing is pressed, and the error says why.
func TestPressAnswerRefusesABroadAlways(t *testing.T) {
	m, panes, target := newCodexManager(t)
	ctx := context.Background()
	if _, _, err := m.Ensure(ctx, target); err != nil {
		t.Fatal(err)
	}
	d, _ := json.Marshal(map[string]string{"behavior": "allow"})
	req := state.Request{Session: target.Key, Keys: "codex", Status: state.RequestDecided, ToolName: "Bash",
		ToolInput: json.RawMessage(`{"command":"bash -lc 'touch x'"}`), Decision: d, Always: true}
	panes.mu.Lock()
	panes.screen = strings.NewReplacer("touch x", "bash -lc 'touch x'", "`touch`", "`bash`").Replace(codexApprovalAlways)
	panes.ops = nil
	panes.mu.Unlock()
	_, err := m.PressAnswer(ctx, req, "")
	if !errors.Is(err, ErrBroadAlways) || !strings.Contains(err.Error(), "`bash`") {
		t.Errorf("err = %v, want ErrBroadAlways naming the prefix", err)
	}
	panes.mu.Lock()
	defer panes.mu.Unlock()
	for _, o := range panes.ops {
		if strings.HasPrefix(o, "keys ") {
			t.Errorf("a key pressed for a broad Always: %q", panes.ops)
		}
	}
}
