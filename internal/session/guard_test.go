package session

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/tmux"
)

// bashDialog is Claude's permission dialog; Enter or 1 here approves.
const bashDialog = "Claude Code\n Bash command\n touch x\n Do you want to proceed?\n ❯ 1. Yes\n   2. No\n Esc to cancel · Tab to amend\n"

// switchModel is the dialog /model opens on a cached conversation.
const switchModel = "Claude Code\n▔▔▔▔\n  Switch model?\n  ❯ 1. Yes, switch to Sonnet 5.5\n    2. No, go back\n  Enter to confirm · Esc to cancel\n"

func hasOp(ops []string, op string) bool { return slices.Contains(ops, op) }

// A permission dialog that opens between the paste and the Enter does not
// get the Enter (it would pick "1. Yes").
func TestDeliverStopsWhenADialogOpensAfterThePaste(t *testing.T) {
	m, panes, _, target := newManager(t)
	ctx := context.Background()
	m.Ensure(ctx, target)
	panes.takeOps()
	panes.onPaste = func(f *fakePanes, _ string) { f.screen = bashDialog }
	if _, err := m.Deliver(ctx, target.Key, "hello"); !errors.Is(err, ErrDialogOpen) {
		t.Fatalf("err = %v, want ErrDialogOpen", err)
	}
	if ops := panes.takeOps(); hasOp(ops, "keys %1 Enter") {
		t.Fatalf("Enter went into the dialog: %q", ops)
	}
}

// The dialog draws at the very last moment, after the text showed in the
// box: the Enter is still checked, by tmux, as it is sent.
func TestDeliverEnterIsCheckedAsItIsSent(t *testing.T) {
	m, panes, _, target := newManager(t)
	ctx := context.Background()
	m.Ensure(ctx, target)
	panes.takeOps()
	panes.onKey = func(f *fakePanes, k tmux.Key) {
		if k == tmux.KeyEnter {
			f.screen = bashDialog
		}
	}
	if _, err := m.Deliver(ctx, target.Key, "hello"); !errors.Is(err, ErrDialogOpen) {
		t.Fatalf("err = %v, want ErrDialogOpen", err)
	}
	if ops := panes.takeOps(); hasOp(ops, "keys %1 Enter") || !hasOp(ops, "paste %1 hello") {
		t.Fatalf("ops = %q, want the paste and no Enter", ops)
	}
}

// After a missing receipt, Enter is pressed again only while the box still
// holds the message; never into an emptied box or a dialog.
func TestPressEnterOnlyWhileTheBoxHoldsTheMessage(t *testing.T) {
	m, panes, _, target := newManager(t)
	ctx := context.Background()
	m.Ensure(ctx, target)
	if _, err := m.Deliver(ctx, target.Key, "please run the tests"); err != nil {
		t.Fatal(err)
	}
	panes.takeOps()
	// Claude took it (the box is empty): nothing to press.
	if err := m.PressEnter(ctx, target.Key); err == nil {
		t.Fatal("pressed Enter on an empty input box")
	}
	// A dialog is up.
	panes.mu.Lock()
	panes.screen = bashDialog
	panes.mu.Unlock()
	if err := m.PressEnter(ctx, target.Key); err == nil {
		t.Fatal("pressed Enter into a dialog")
	}
	if ops := panes.takeOps(); len(ops) != 0 {
		t.Fatalf("ops = %q, want none", ops)
	}
	// The message still sits in the box: Enter submits it.
	panes.mu.Lock()
	panes.screen = setBox(readyScreen, "please run the tests")
	panes.mu.Unlock()
	if err := m.PressEnter(ctx, target.Key); err != nil {
		t.Fatal(err)
	}
	if ops := panes.takeOps(); !slices.Equal(ops, []string{"keys %1 Enter"}) {
		t.Fatalf("ops = %q", ops)
	}
}

// Shift+Tab never goes into a dialog, even one that opens between presses.
func TestSetModeNeverPressesShiftTabIntoADialog(t *testing.T) {
	m, panes, _, target := newManager(t)
	ctx := context.Background()
	m.Ensure(ctx, target)
	panes.takeOps()
	panes.mu.Lock()
	panes.screen = bashDialog
	panes.mu.Unlock()
	if err := m.SetMode(ctx, target.Key, "plan"); err == nil {
		t.Fatal("SetMode succeeded under a dialog")
	}
	if ops := panes.takeOps(); len(ops) != 0 {
		t.Fatalf("ops = %q", ops)
	}
	panes.mu.Lock()
	panes.screen = readyScreen
	presses := 0
	panes.onKey = func(f *fakePanes, k tmux.Key) {
		if k == tmux.KeyShiftTab {
			if presses++; presses == 2 {
				f.screen = bashDialog
			}
		}
	}
	panes.mu.Unlock()
	if err := m.SetMode(ctx, target.Key, "plan"); err == nil {
		t.Fatal("SetMode succeeded though a dialog opened")
	}
	if ops := panes.takeOps(); !slices.Equal(ops, []string{"keys %1 BTab", "refused BTab"}) {
		t.Fatalf("ops = %q", ops)
	}
}

// Stop does not type /exit into a dialog (Enter would approve it); it
// kills the pane.
func TestStopDoesNotTypeExitIntoADialog(t *testing.T) {
	m, panes, store, target := newManager(t)
	ctx := context.Background()
	m.Ensure(ctx, target)
	panes.takeOps()
	panes.onPaste = func(f *fakePanes, _ string) { f.screen = bashDialog }
	if err := m.Stop(ctx, target.Key); err != nil {
		t.Fatal(err)
	}
	if ops := panes.takeOps(); hasOp(ops, "keys %1 Enter") {
		t.Fatalf("ops = %q", ops)
	}
	if rec, _ := store.Sessions.Get(target.Key); rec.PaneID != "" {
		t.Errorf("pane still recorded: %+v", rec)
	}
}

// On a cached conversation /model asks "Switch model?": ccbridge answers 1
// and reports the switch once Claude's PostModelSwitch hook says so.
func TestSetModelAnswersTheSwitchDialog(t *testing.T) {
	m, panes, store, target := newManager(t)
	ctx := context.Background()
	m.Ensure(ctx, target)
	panes.takeOps()
	panes.afterKey = func(f *fakePanes, k tmux.Key) {
		switch {
		case k == tmux.KeyEnter && strings.Contains(f.ops[len(f.ops)-2], "paste %1 /model sonnet"):
			f.screen = switchModel
		case k == "1" && strings.Contains(f.screen, "Switch model?"):
			f.screen = modelAnswer("/model sonnet", "Set model to Sonnet 5.5 and saved as your default for new sessions")
			postModelSwitch(t, store, target.Key, "sonnet")
		}
	}
	if err := m.SetModel(ctx, target.Key, "sonnet"); err != nil {
		t.Fatal(err)
	}
	if ops := panes.takeOps(); !hasOp(ops, "keys %1 1") {
		t.Fatalf("ops = %q, want the switch confirmed with 1", ops)
	}
	if rec, _ := store.Sessions.Get(target.Key); rec.Model != "sonnet" {
		t.Errorf("model = %q", rec.Model)
	}
	// "No, go back" (from the terminal) is reported, and the model kept.
	panes.afterKey = func(f *fakePanes, k tmux.Key) {
		if k == tmux.KeyEnter && strings.Contains(f.ops[len(f.ops)-2], "paste %1 /model opus") {
			f.screen = modelAnswer("/model opus", "Kept model as Sonnet 5.5")
		}
	}
	if err := m.SetModel(ctx, target.Key, "opus"); err == nil || !strings.Contains(err.Error(), "Kept model") {
		t.Fatalf("err = %v", err)
	}
	if rec, _ := store.Sessions.Get(target.Key); rec.Model != "sonnet" {
		t.Errorf("model = %q after a kept model", rec.Model)
	}
}

// The digit that confirms a model switch is only pressed into that dialog:
// a permission dialog in its place gets nothing.
func TestSetModelNeverAnswersAnotherDialog(t *testing.T) {
	m, panes, _, target := newManager(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	m.Ensure(ctx, target)
	panes.takeOps()
	panes.afterKey = func(f *fakePanes, k tmux.Key) {
		if k == tmux.KeyEnter && len(f.ops) > 1 && strings.HasPrefix(f.ops[len(f.ops)-2], "paste") {
			f.screen = strings.Replace(bashDialog, "touch x", "echo Switch model?", 1)
		}
	}
	if err := m.SetModel(ctx, target.Key, "sonnet"); err == nil {
		t.Fatal("SetModel succeeded")
	}
	if ops := panes.takeOps(); hasOp(ops, "keys %1 1") {
		t.Fatalf("answered a permission dialog: %q", ops)
	}
}

// A daemon killed after creating the pane and before recording it: the
// next Ensure (and Reconcile) adopts the tagged pane instead of starting a
// second Claude in the same directory.
func TestATaggedPaneTheRecordDoesNotNameIsAdopted(t *testing.T) {
	m, panes, store, target := newManager(t)
	ctx := context.Background()
	// What start leaves behind when killed right after NewPane.
	store.Sessions.Update(ctx, target.Key, func(s *state.Session) error { s.ChannelID, s.PaneID = target.ChannelID, ""; return nil })
	panes.panes = append(panes.panes, tmux.Pane{ID: "%7", Tag: target.Key}, tmux.Pane{ID: "%8", Tag: "home-other"})
	adopted, _, err := m.Reconcile(ctx)
	if err != nil || adopted != 1 {
		t.Fatalf("Reconcile = %d, %v", adopted, err)
	}
	if rec, _ := store.Sessions.Get(target.Key); rec.PaneID != "%7" {
		t.Fatalf("record after Reconcile = %+v", rec)
	}
	store.Sessions.Update(ctx, target.Key, func(s *state.Session) error { s.PaneID = ""; return nil })
	pane, started, err := m.Ensure(ctx, target)
	if err != nil || started || pane != "%7" {
		t.Fatalf("Ensure = %q, %v, %v; want the tagged pane %%7", pane, started, err)
	}
	if ops := panes.takeOps(); len(ops) != 0 {
		t.Fatalf("ops = %q, want none", ops)
	}
}

// Pane ids restart with the tmux server: a recorded id now used by a pane
// tagged for another session is not this session's.
func TestARecordedPaneTaggedForAnotherSessionIsNotOurs(t *testing.T) {
	m, panes, store, target := newManager(t)
	ctx := context.Background()
	panes.panes = append(panes.panes, tmux.Pane{ID: "%1", Tag: "home-other"})
	store.Sessions.Update(ctx, target.Key, func(s *state.Session) error { s.PaneID = "%1"; return nil })
	pane, started, err := m.Ensure(ctx, target)
	if err != nil || !started || pane == "%1" {
		t.Fatalf("Ensure = %q, %v, %v; want a new pane", pane, started, err)
	}
}

// A person's key from a /screen button: PressKeys returns once Claude has
// redrawn, so the screen read next shows the key's effect.
func TestPressKeysWaitsForTheRedraw(t *testing.T) {
	m, panes, _, target := newManager(t)
	ctx := context.Background()
	m.Ensure(ctx, target)
	panes.mu.Lock()
	panes.afterKey = func(f *fakePanes, k tmux.Key) {
		f.screen = readyScreen // the key itself changes nothing at once
		go func() {
			time.Sleep(300 * time.Millisecond)
			f.mu.Lock()
			f.screen = nextMode(readyScreen)
			f.mu.Unlock()
		}()
	}
	panes.mu.Unlock()
	if err := m.PressKeys(ctx, target.Key, "BTab"); err != nil {
		t.Fatal(err)
	}
	if screen, _ := m.Screen(ctx, target.Key, 40); !strings.Contains(screen, "accept edits on") {
		t.Fatalf("the screen after the key does not show its effect:\n%s", screen)
	}
}

// The footer, not a count, says where the cycle is: a Claude whose cycle
// skips a mode still ends in the mode asked for.
func TestSetModeFollowsTheFooter(t *testing.T) {
	m, panes, store, target := newManager(t)
	ctx := context.Background()
	m.Ensure(ctx, target)
	panes.mu.Lock()
	panes.screen = strings.Replace(readyScreen, "⏸ manual mode on", "⏸ plan mode on", 1)
	panes.afterKey = func(f *fakePanes, k tmux.Key) {
		// This Claude has no auto mode: plan goes straight back to manual.
		f.screen = strings.Replace(f.screen, "⏵⏵ auto mode on", "⏸ manual mode on", 1)
	}
	panes.mu.Unlock()
	panes.takeOps()
	if err := m.SetMode(ctx, target.Key, "default"); err != nil {
		t.Fatal(err)
	}
	if ops := panes.takeOps(); !slices.Equal(ops, []string{"keys %1 BTab"}) {
		t.Fatalf("ops = %q", ops)
	}
	if rec, _ := store.Sessions.Get(target.Key); rec.ModeSeen != "default" {
		t.Errorf("mode = %q", rec.ModeSeen)
	}
	if err := m.SetMode(ctx, target.Key, "auto"); err == nil {
		t.Fatal("reported a mode the footer never showed")
	}
}
