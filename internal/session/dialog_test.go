package session

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/tmux"
)

func readScreen(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The dialogs of 2.1.328 at start, as captured from the real binary
// (claude-code-protocol.md §12).
func TestParseDialogOfTheRealStartDialogs(t *testing.T) {
	cases := []struct {
		file, first string
		choices     []string
		selected    int
	}{
		{"trust-2.1.328.txt", "Accessing workspace:", []string{"No, exit", "Yes, I trust this folder"}, 0},
		{"nudge-2.1.328.txt", "Make auto mode your default permission mode?", []string{"Yes, set auto mode as my default permission mode", "No, keep manual mode"}, 0},
	}
	for _, c := range cases {
		screen := readScreen(t, c.file)
		d, ok := ParseDialog(screen)
		if !ok || firstLine(d.Text) != c.first || !slices.Equal(d.Choices, c.choices) || d.Selected != c.selected || d.Hash == "" {
			t.Errorf("%s: ParseDialog = %+v, %v", c.file, d, ok)
		}
		if !DialogOpen(screen) {
			t.Errorf("%s: the screen guard does not see the dialog", c.file)
		}
		// The same dialog with another choice highlighted is the same dialog.
		moved := strings.Replace(strings.Replace(screen, "❯ "+c.choices[0], "  "+c.choices[0], 1), "  "+c.choices[1], "❯ "+c.choices[1], 1)
		if m, ok := ParseDialog(moved); !ok || m.Hash != d.Hash || m.Selected != 1 {
			t.Errorf("%s: moved highlight: %+v", c.file, m)
		}
	}
	// 2.1.328's nudge drops its "Not answered yet" hint once the highlight
	// moves: the same dialog still.
	nudge := readScreen(t, "nudge-2.1.328.txt")
	hinted, _ := ParseDialog(nudge + "\n  Not answered yet · ↑/↓ to choose · Esc to cancel\n")
	plain, _ := ParseDialog(nudge)
	if hinted.Hash != plain.Hash || !strings.Contains(hinted.Text, "Not answered yet") {
		t.Errorf("the hint changed the dialog: %+v vs %+v", hinted, plain)
	}
	for _, screen := range []string{readyScreen, "", "Claude Code\n❯ only one choice\n"} {
		if d, ok := ParseDialog(screen); ok {
			t.Errorf("a dialog found in %q: %+v", screen, d)
		}
	}
}

// A Claude that stops at a dialog on its way up is shown (once) to whoever
// started it and waited for, whatever the start timeout, until the person
// answered and the input box appeared.
func TestEnsureShowsADialogAtStartAndWaitsForItsAnswer(t *testing.T) {
	m, panes, _, target := newManager(t)
	m.opt.StartTimeout = 300 * time.Millisecond
	trust := readScreen(t, "trust-2.1.328.txt")
	panes.screen = trust
	var mu sync.Mutex
	var got []Dialog
	target.OnDialog = func(d Dialog) { mu.Lock(); got = append(got, d); mu.Unlock() }
	done := make(chan error, 1)
	go func() { _, _, err := m.Ensure(context.Background(), target); done <- err }()
	deadline := time.Now().Add(5 * time.Second)
	var d Dialog
	for {
		mu.Lock()
		n := len(got)
		if n > 0 {
			d = got[0]
		}
		mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the dialog was never shown")
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(time.Second) // beyond the start timeout: still waiting
	select {
	case err := <-done:
		t.Fatalf("Ensure gave up while a dialog waited for its person: %v", err)
	default:
	}
	if ops := panes.takeOps(); slices.ContainsFunc(ops, func(op string) bool { return strings.HasPrefix(op, "keys") }) {
		t.Fatalf("something was pressed for the person: %q", ops)
	}
	// The person picks "Yes, I trust this folder".
	panes.afterKey = func(f *fakePanes, k tmux.Key) {
		switch k {
		case tmux.KeyDown:
			f.screen = strings.Replace(strings.Replace(trust, "❯ No, exit", "  No, exit", 1), "  Yes, I trust", "❯ Yes, I trust", 1)
		case tmux.KeyEnter:
			f.screen = readyScreen
		}
	}
	if err := m.AnswerDialog(context.Background(), target.Key, d.Hash, 1); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if ops := panes.takeOps(); !slices.Equal(ops, []string{"keys %1 Down", "keys %1 Enter"}) {
		t.Fatalf("ops = %q", ops)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 {
		t.Fatalf("the dialog was shown %d times", len(got))
	}
}

// An answer meant for one dialog never reaches another that replaced it.
func TestAnswerDialogPressesNothingIntoAnotherDialog(t *testing.T) {
	m, panes, _, target := newManager(t)
	ctx := context.Background()
	if _, _, err := m.Ensure(ctx, target); err != nil {
		t.Fatal(err)
	}
	panes.takeOps()
	trust, _ := ParseDialog(readScreen(t, "trust-2.1.328.txt"))
	panes.screen = readScreen(t, "nudge-2.1.328.txt")
	if err := m.AnswerDialog(ctx, target.Key, trust.Hash, 1); !errors.Is(err, ErrDialogChanged) {
		t.Fatalf("err = %v", err)
	}
	if ops := panes.takeOps(); len(ops) != 0 {
		t.Fatalf("pressed %q", ops)
	}
}

// A dialog a running Claude opens with no hook card for it (here the nudge,
// as any later one) is shown to the front end once; one a card stands for
// is left to the card; nothing is pressed.
func TestWatchDialogsShowsADialogOpenedMidSession(t *testing.T) {
	t.Parallel()
	m, panes, store, target := newManager(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var got []Dialog
	target.OnDialog = func(d Dialog) { mu.Lock(); got = append(got, d); mu.Unlock() }
	if _, _, err := m.Ensure(ctx, target); err != nil {
		t.Fatal(err)
	}
	panes.takeOps()
	go m.WatchDialogs(ctx)
	shown := func() int { mu.Lock(); defer mu.Unlock(); return len(got) }
	// A permission prompt has its card: not shown.
	if _, err := store.Requests.Create(ctx, "r1", state.Request{Session: target.Key, Status: state.RequestPending}); err != nil {
		t.Fatal(err)
	}
	panes.mu.Lock()
	panes.screen = readScreen(t, "nudge-2.1.328.txt")
	panes.mu.Unlock()
	time.Sleep(2*dialogWatch + dialogSettle)
	if n := shown(); n != 0 {
		t.Fatalf("a carded dialog was shown %d times", n)
	}
	if err := store.Requests.Delete(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(4 * dialogWatch); shown() == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the dialog was never shown")
		}
	}
	time.Sleep(2*dialogWatch + dialogSettle)
	if n := shown(); n != 1 {
		t.Fatalf("shown %d times", n)
	}
	if ops := panes.takeOps(); slices.ContainsFunc(ops, func(op string) bool { return strings.HasPrefix(op, "keys") }) {
		t.Fatalf("something was pressed: %q", ops)
	}
}

// watched starts a session whose front end records the dialogs it is told
// about, and the dialog watcher.
func watched(t *testing.T) (*Manager, *fakePanes, *state.Store, Target, func() []Dialog) {
	t.Helper()
	m, panes, store, target := newManager(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	var mu sync.Mutex
	var got []Dialog
	target.OnDialog = func(d Dialog) { mu.Lock(); got = append(got, d); mu.Unlock() }
	if _, _, err := m.Ensure(ctx, target); err != nil {
		t.Fatal(err)
	}
	panes.takeOps()
	go m.WatchDialogs(ctx)
	return m, panes, store, target, func() []Dialog { mu.Lock(); defer mu.Unlock(); return slices.Clone(got) }
}

func (f *fakePanes) show(screen string) {
	f.mu.Lock()
	f.screen = screen
	f.mu.Unlock()
}

// After a permission card expired (or failed to post), Claude's own
// dialog stays on the screen with no pending request: it is still the
// card's, never posted as a dialog no hook reports with a working "1. Yes"
// (security-3 finding 1). The same for every hook-backed dialog; nothing
// answers one through the dialog path either.
func TestWatcherHandsOverNoHookDialogOfAnExpiredCard(t *testing.T) {
	t.Parallel()
	// Each screen in a session of its own, side by side: the proof is
	// a wait in which nothing may happen, two watches long.
	for _, file := range []string{"bash-after-markers-2.1.328.txt", "write-2.1.328.txt", "plan-2.1.328.txt", "ask-2.1.328.txt", "fetch-2.1.328.txt"} {
		t.Run(file, func(t *testing.T) {
			t.Parallel()
			m, panes, store, target, shown := watched(t)
			ctx := context.Background()
			if _, err := store.Requests.Create(ctx, "r1", state.Request{Session: target.Key, Status: state.RequestExpired}); err != nil {
				t.Fatal(err)
			}
			if _, err := store.Requests.Create(ctx, "r2", state.Request{Session: target.Key, Status: state.RequestFailed}); err != nil {
				t.Fatal(err)
			}
			screen := readScreen(t, file)
			panes.show(screen)
			time.Sleep(2*dialogWatch + 2*dialogSettle)
			if got := shown(); len(got) != 0 {
				t.Fatalf("handed over as a dialog no hook reports: %+v", got)
			}
			if d, ok, err := m.Dialog(ctx, target.Key); ok || err != nil {
				t.Fatalf("Dialog = %+v, %v, %v", d, ok, err)
			}
			if d, ok := ParseDialog(screen); ok {
				if err := m.AnswerDialog(ctx, target.Key, d.Hash, 0); !errors.Is(err, ErrDialogChanged) {
					t.Fatalf("AnswerDialog = %v", err)
				}
			}
			if ops := panes.takeOps(); slices.ContainsFunc(ops, func(op string) bool { return strings.HasPrefix(op, "keys") }) {
				t.Fatalf("something was pressed: %q", ops)
			}
			// A dialog no hook reports is still shown.
			panes.show(readScreen(t, "switch-model-2.1.328.txt"))
			for deadline := time.Now().Add(4 * dialogWatch); len(shown()) == 0; time.Sleep(50 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("Switch model? was never shown")
				}
			}
		})
	}
}

// The watcher looks at no session another action holds (fidelity-3 P9):
// /model answering "Switch model?" itself, a delivery, a person's key.
func TestWatcherSkipsASessionAnActionHolds(t *testing.T) {
	t.Parallel()
	m, panes, _, target, shown := watched(t)
	unlock, err := m.lock(context.Background(), target.Key)
	if err != nil {
		t.Fatal(err)
	}
	panes.show(readScreen(t, "switch-model-2.1.328.txt"))
	time.Sleep(2*dialogWatch + 2*dialogSettle)
	if got := shown(); len(got) != 0 {
		unlock()
		t.Fatalf("shown while /model held the session: %+v", got)
	}
	unlock()
	for deadline := time.Now().Add(4 * dialogWatch); len(shown()) == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("never shown once the session was free")
		}
	}
}

// A dialog seen before its hook recorded the request (the hook runs beside
// Claude's drawing, and may take longer than one settle on a loaded
// machine) is not posted beside the card: the request is looked for again
// after a second settle (fidelity-3 P9).
func TestNoticeDialogLooksForTheCardAgainAfterASecondSettle(t *testing.T) {
	m, panes, store, target := newManager(t)
	ctx := context.Background()
	var mu sync.Mutex
	var got []Dialog
	target.OnDialog = func(d Dialog) { mu.Lock(); got = append(got, d); mu.Unlock() }
	if _, _, err := m.Ensure(ctx, target); err != nil {
		t.Fatal(err)
	}
	// A dialog of a later release that names no marker: only the request
	// tells it is a card's. The hook records it by the third look.
	panes.show(strings.Replace(readScreen(t, "switch-model-2.1.328.txt"), "Switch model?", "Allow this tool?", 1))
	looks := 0
	panes.onCapture = func(*fakePanes) {
		if looks++; looks == 3 {
			if _, err := store.Requests.Create(ctx, "r1", state.Request{Session: target.Key, Status: state.RequestPending}); err != nil {
				t.Error(err)
			}
		}
	}
	m.noticeDialog(ctx, target.Key)
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 0 {
		t.Fatalf("posted beside its card: %+v", got)
	}
}

// The prompt timeout bounds how long a dialog at start waits for its
// person; a start that shows no dialog is bounded by the start timeout
// alone, however short the prompt timeout (a loaded machine takes seconds
// to draw Claude's input box).
func TestSlowStartWithoutADialogOutlastsThePromptTimeout(t *testing.T) {
	m, panes, _, target := newManager(t)
	m.opt.StartTimeout = 10 * time.Second
	m.config().Claude.PromptTimeout.Duration = 200 * time.Millisecond
	panes.screen = "Claude Code v2.1.328\n"
	go func() {
		time.Sleep(time.Second)
		panes.mu.Lock()
		panes.screen = readyScreen
		panes.mu.Unlock()
	}()
	if _, _, err := m.Ensure(context.Background(), target); err != nil {
		t.Fatalf("a start with no dialog failed at the prompt timeout: %v", err)
	}
}

// A dialog at start that nobody answers ends the start after the prompt
// timeout, and says so.
func TestUnansweredDialogAtStartEndsAtThePromptTimeout(t *testing.T) {
	m, panes, _, target := newManager(t)
	m.opt.StartTimeout = 100 * time.Millisecond
	m.config().Claude.PromptTimeout.Duration = 1500 * time.Millisecond
	target.OnDialog = func(Dialog) {}
	panes.screen = readScreen(t, "trust-2.1.328.txt")
	start := time.Now()
	_, _, err := m.Ensure(context.Background(), target)
	if err == nil || !strings.Contains(err.Error(), "dialog") {
		t.Fatalf("err = %v", err)
	}
	if waited := time.Since(start); waited < 1500*time.Millisecond {
		t.Fatalf("gave up after %v, before the prompt timeout", waited)
	}
}
