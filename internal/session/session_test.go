package session

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/tmux"
)

const readyScreen = "Claude Code\n────────────\n❯ \n────────────\n  ⏸ manual mode on · ? for shortcuts\n"

// fakePanes records what a session does to its panes. Its screen reacts
// like Claude's: a paste shows in the input box, Enter empties it, Shift+Tab
// moves the footer's mode. Guarded keys and pastes are checked against the
// screen as it is at that moment, like tmux does.
type fakePanes struct {
	mu     sync.Mutex
	screen string
	panes  []tmux.Pane
	ops    []string
	specs  []tmux.PaneSpec
	// onPaste and onKey, when set, run (with mu held) after a paste and
	// before a guarded key is checked: the screen may change there.
	onPaste  func(f *fakePanes, text string)
	onKey    func(f *fakePanes, k tmux.Key)
	afterKey func(f *fakePanes, k tmux.Key) // runs after a key took effect
	// captureErr, when set, is what every Capture fails with.
	captureErr error
	// onCapture, when set, runs (without mu) after each Capture.
	onCapture func(f *fakePanes)
	// dieOnStart: a new pane's program exits at once (kept dead).
	dieOnStart    bool
	letGo, killed []string
}

func (f *fakePanes) NewPane(_ context.Context, spec tmux.PaneSpec) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := fmt.Sprintf("%%%d", len(f.panes)+1)
	f.panes = append(f.panes, tmux.Pane{ID: id, Tag: spec.Tag, Dead: f.dieOnStart})
	f.specs = append(f.specs, spec)
	f.ops = append(f.ops, "new "+id)
	return id, nil
}

func (f *fakePanes) paste(pane, text string) {
	f.ops = append(f.ops, "paste "+pane+" "+text)
	f.screen = setBox(f.screen, text)
	if f.onPaste != nil {
		f.onPaste(f, text)
	}
}

func (f *fakePanes) SendKeys(_ context.Context, pane string, keys ...tmux.Key) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.keys(pane, keys)
	return nil
}

func (f *fakePanes) keys(pane string, keys []tmux.Key) {
	var ks []string
	for _, k := range keys {
		ks = append(ks, string(k))
		switch k {
		case tmux.KeyEnter, tmux.KeyClearLine:
			f.screen = setBox(f.screen, "")
		case tmux.KeyShiftTab:
			f.screen = nextMode(f.screen)
		}
	}
	f.ops = append(f.ops, "keys "+pane+" "+strings.Join(ks, " "))
	if f.afterKey != nil {
		for _, k := range keys {
			f.afterKey(f, k)
		}
	}
}

func (f *fakePanes) allows(pane string, g tmux.Guard) bool {
	if g.ServerPID != 0 || g.PanePID != 0 {
		i := slices.IndexFunc(f.panes, func(p tmux.Pane) bool { return p.ID == pane })
		if i < 0 || f.panes[i].ServerPID != g.ServerPID || f.panes[i].PID != g.PanePID {
			return false
		}
	}
	for _, w := range g.Without {
		if strings.Contains(f.screen, w) {
			return false
		}
	}
	for _, w := range g.With {
		if !strings.Contains(f.screen, w) {
			return false
		}
	}
	for _, l := range g.Lines {
		if !slices.ContainsFunc(strings.Split(f.screen, "\n"), func(s string) bool { return strings.TrimPrefix(strings.TrimSpace(s), "› ") == strings.TrimSpace(l) }) {
			return false
		}
	}
	return true
}

func (f *fakePanes) PasteTextIf(_ context.Context, pane string, g tmux.Guard, text string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.allows(pane, g) {
		f.ops = append(f.ops, "refused paste")
		return tmux.ErrRefused
	}
	f.paste(pane, text)
	return nil
}

func (f *fakePanes) SendKeysIf(_ context.Context, pane string, g tmux.Guard, keys ...tmux.Key) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.onKey != nil {
		f.onKey(f, keys[0])
	}
	if !f.allows(pane, g) {
		f.ops = append(f.ops, "refused "+string(keys[0]))
		return tmux.ErrRefused
	}
	f.keys(pane, keys)
	return nil
}

// setBox puts text into the input box line of a screen that has one.
func setBox(screen, text string) string {
	lines := strings.Split(screen, "\n")
	for i := 1; i < len(lines); i++ {
		if strings.HasPrefix(lines[i], "❯") && isRule(lines[i-1]) {
			lines[i] = "❯ " + text
		}
	}
	return strings.Join(lines, "\n")
}

// nextMode moves the footer along the Shift+Tab cycle.
func nextMode(screen string) string {
	names := []string{"⏸ manual mode on", "⏵⏵ accept edits on", "⏸ plan mode on", "⏵⏵ auto mode on"}
	for i, n := range names {
		if strings.Contains(screen, n) {
			return strings.Replace(screen, n, names[(i+1)%len(names)], 1)
		}
	}
	return screen
}

func (f *fakePanes) Capture(_ context.Context, pane string, _ int) (string, error) {
	f.mu.Lock()
	screen, err, after := f.screen, f.captureErr, f.onCapture
	f.mu.Unlock()
	if after != nil {
		after(f)
	}
	return screen, err
}

func (f *fakePanes) ListPanes(context.Context) ([]tmux.Pane, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.panes), nil
}

func (f *fakePanes) KillPane(_ context.Context, pane string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.killed = append(f.killed, pane)
	return nil
}

func (f *fakePanes) LetGoOnExit(_ context.Context, pane string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.letGo = append(f.letGo, pane)
	return nil
}

func (f *fakePanes) takeOps() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	ops := f.ops
	f.ops = nil
	return ops
}

func newManager(t *testing.T) (*Manager, *fakePanes, *state.Store, Target) {
	t.Helper()
	store, err := state.OpenStore(filepath.Join(t.TempDir(), "rt"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(fmt.Sprintf(`
[claude]
command = "/opt/claude"
args = ["--verbose"]
env = { ANTHROPIC_BASE_URL = "http://127.0.0.1:1" }
[[servers]]
name = "home"
token_env = "X"
guild_id = "100000000000000001"
owner_ids = ["100000000000000002"]
  [[servers.projects]]
  name = "api"
  channel_id = "100000000000000003"
  path = %q
  model = "sonnet"
`, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Path = "/etc/ccbridge.toml"
	panes := &fakePanes{screen: readyScreen}
	m, err := New(Options{Config: cfg, Store: store, Panes: panes, HookStop: "/bin/hs", HookPretool: "/bin/hp", StartTimeout: time.Second, ReceiptTimeout: time.Second,
		FindProgram: func(string, string) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	target, err := ProjectTarget(cfg, cfg.Servers[0], cfg.Servers[0].Projects[0])
	if err != nil {
		t.Fatal(err)
	}
	return m, panes, store, target
}

func TestEnsureStartsClaudeOnceWithTheBridgeEnvironment(t *testing.T) {
	m, panes, store, target := newManager(t)
	ctx := context.Background()
	pane, started, err := m.Ensure(ctx, target)
	if err != nil || !started || pane != "%1" {
		t.Fatalf("Ensure = %q, %v, %v", pane, started, err)
	}
	spec := panes.specs[0]
	// The hook settings go inline: no file in the runtime dir that someone
	// could replace between daemon start and a session start.
	// (TestSettingsCarryTheSessionPolicy checks what they hold.)
	settings := m.settingsFor(target)
	wantArgv := []string{"/opt/claude", "--verbose", "--permission-mode", "default", "--settings", settings}
	if !slices.Equal(spec.Argv[:len(wantArgv)], wantArgv) || !slices.Contains(spec.Argv, "--model") || spec.Argv[len(spec.Argv)-1] != "sonnet" {
		t.Errorf("argv = %q", spec.Argv)
	}
	if spec.Session != "ccbridge-home" || spec.Window != "home-api" || spec.Dir != target.Dir {
		t.Errorf("spec = %+v", spec)
	}
	for k, want := range map[string]string{"CCBRIDGE_SESSION": "home-api", "CCBRIDGE_RUNTIME_DIR": store.Dir.Root(),
		"CCBRIDGE_CONFIG": "/etc/ccbridge.toml", "ANTHROPIC_BASE_URL": "http://127.0.0.1:1"} {
		if spec.Env[k] != want {
			t.Errorf("env %s = %q, want %q", k, spec.Env[k], want)
		}
	}
	for k := range spec.Env {
		if strings.Contains(k, "TOKEN") {
			t.Errorf("pane env has %s", k)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(store.Dir.Root(), "*settings*")); len(files) != 0 {
		t.Errorf("a settings file exists in the runtime dir: %v", files)
	}
	if spec.Tag != "home-api" {
		t.Errorf("pane tag = %q", spec.Tag)
	}
	rec, _ := store.Sessions.Get("home-api")
	if rec.PaneID != "%1" || rec.ChannelID != "100000000000000003" || rec.Server != "home" || rec.PromptTimeout != cfgPromptTimeout(m) {
		t.Errorf("record = %+v", rec)
	}
	if _, started, _ := m.Ensure(ctx, target); started {
		t.Error("a second Ensure started another pane")
	}
}

func TestEnsureReportsAClaudeThatNeverComesUp(t *testing.T) {
	m, panes, _, target := newManager(t)
	panes.screen = "Do you trust the files in this folder?\n❯ 1. Yes, proceed\n"
	_, _, err := m.Ensure(context.Background(), target)
	var nr *NotReadyError
	if !errors.As(err, &nr) || !strings.Contains(nr.Screen, "Do you trust") {
		t.Fatalf("err = %v", err)
	}
}

func TestDeliverNeverTypesIntoADialog(t *testing.T) {
	m, panes, _, target := newManager(t)
	ctx := context.Background()
	m.Ensure(ctx, target)
	panes.takeOps()
	panes.screen = "Bash command\n echo hi\n Do you want to proceed?\n ❯ 1. Yes\n"
	if _, err := m.Deliver(ctx, target.Key, "hello"); !errors.Is(err, ErrDialogOpen) {
		t.Fatalf("err = %v", err)
	}
	if ops := panes.takeOps(); len(ops) != 0 {
		t.Fatalf("typed into a dialog: %q", ops)
	}
	panes.screen = readyScreen
	if _, err := m.Deliver(ctx, target.Key, "hello"); err != nil {
		t.Fatal(err)
	}
	if ops := panes.takeOps(); !slices.Equal(ops, []string{"keys %1 C-u", "paste %1 hello", "keys %1 Enter"}) {
		t.Fatalf("ops = %q", ops)
	}
}

func TestDeliverWithoutPane(t *testing.T) {
	m, _, _, _ := newManager(t)
	if _, err := m.Deliver(context.Background(), "home-api", "x"); !errors.Is(err, ErrNoPane) {
		t.Fatalf("err = %v", err)
	}
}

func TestWaitReceipt(t *testing.T) {
	m, _, store, target := newManager(t)
	ctx := context.Background()
	m.Ensure(ctx, target)
	since := time.Now()
	go func() {
		time.Sleep(100 * time.Millisecond)
		store.Sessions.Update(ctx, target.Key, func(s *state.Session) error {
			s.AddPrompt(state.Prompt{At: time.Now(), Text: "\n\n<pasted_content id=\"1\">\nfirst  line\nsecond line\n</pasted_content id=\"1\">\n"})
			return nil
		})
	}()
	if err := m.WaitReceipt(ctx, target.Key, since, "first line\r\nsecond line", 0); err != nil {
		t.Fatal(err)
	}
	if err := m.WaitReceipt(ctx, target.Key, time.Now(), "never sent", 300*time.Millisecond); !errors.Is(err, ErrNoReceipt) {
		t.Fatalf("err = %v", err)
	}
}

func TestSetModeWalksTheCycle(t *testing.T) {
	m, panes, store, target := newManager(t)
	ctx := context.Background()
	m.Ensure(ctx, target)
	panes.takeOps()
	if err := m.SetMode(ctx, target.Key, "plan"); err != nil {
		t.Fatal(err)
	}
	if ops := panes.takeOps(); !slices.Equal(ops, []string{"keys %1 BTab", "keys %1 BTab"}) {
		t.Fatalf("ops = %q", ops)
	}
	if err := m.SetMode(ctx, target.Key, "default"); err != nil {
		t.Fatal(err)
	}
	if ops := panes.takeOps(); !slices.Equal(ops, []string{"keys %1 BTab", "keys %1 BTab"}) {
		t.Fatalf("plan → default ops = %q", ops)
	}
	if err := m.SetMode(ctx, target.Key, "bypassPermissions"); err == nil {
		t.Error("bypassPermissions switched without a restart")
	}
	if rec, _ := store.Sessions.Get(target.Key); rec.PermissionMode != "default" {
		t.Errorf("mode = %s", rec.PermissionMode)
	}
}

func TestReconcileAdoptsLivePanes(t *testing.T) {
	m, panes, store, target := newManager(t)
	ctx := context.Background()
	m.Ensure(ctx, target)
	store.Sessions.Update(ctx, "home-gone", func(s *state.Session) error { s.PaneID, s.Busy = "%99", true; return nil })
	adopted, gone, err := m.Reconcile(ctx)
	if err != nil || adopted != 1 || gone != 1 {
		t.Fatalf("Reconcile = %d, %d, %v", adopted, gone, err)
	}
	if rec, _ := store.Sessions.Get("home-gone"); rec.PaneID != "" || rec.Busy {
		t.Errorf("gone session = %+v", rec)
	}
	_ = panes
}

func TestScreenHelpers(t *testing.T) {
	if !InputReady(readyScreen) || DialogOpen(readyScreen) || Busy(readyScreen) {
		t.Error("ready screen misread")
	}
	busy := strings.Replace(readyScreen, "? for shortcuts", "esc to interrupt", 1)
	if InputReady(busy) || !Busy(busy) {
		t.Error("busy screen misread")
	}
	if got := LastLines("a\nb  \nc\n\n\n", 2); got != "b\nc" {
		t.Errorf("LastLines = %q", got)
	}
}

func TestInterruptPressesEscapeUntilTheTurnStops(t *testing.T) {
	t.Parallel()
	m, panes, store, target := newManager(t)
	ctx := context.Background()
	m.Ensure(ctx, target)
	store.Sessions.Update(ctx, target.Key, func(s *state.Session) error { s.Busy = true; return nil })
	panes.takeOps()
	panes.mu.Lock()
	panes.screen = strings.Replace(readyScreen, "? for shortcuts", "esc to interrupt", 1)
	panes.mu.Unlock()
	go func() {
		time.Sleep(2 * time.Second) // the first Escape is lost
		panes.mu.Lock()
		panes.screen = readyScreen
		panes.mu.Unlock()
	}()
	if err := m.Interrupt(ctx, target.Key); err != nil {
		t.Fatal(err)
	}
	if ops := panes.takeOps(); !slices.Equal(ops, []string{"keys %1 Escape", "keys %1 Escape"}) {
		t.Fatalf("ops = %q", ops)
	}
	if rec, _ := store.Sessions.Get(target.Key); rec.Busy {
		t.Error("still busy")
	}
	// An idle session gets one Escape only.
	if err := m.Interrupt(ctx, target.Key); err != nil {
		t.Fatal(err)
	}
	if ops := panes.takeOps(); !slices.Equal(ops, []string{"keys %1 Escape"}) {
		t.Fatalf("idle ops = %q", ops)
	}
}

// modelAnswer is the screen after /model: its echo, Claude's answer, the box.
func modelAnswer(cmd, answer string) string {
	return "Claude Code\n❯ " + cmd + "\n  ⎿  " + answer + "\n\n" + readyScreen[len("Claude Code\n"):]
}

func TestSetModelWaitsForClaudesConfirmation(t *testing.T) {
	m, panes, store, target := newManager(t)
	ctx := context.Background()
	m.Ensure(ctx, target)
	go func() {
		time.Sleep(300 * time.Millisecond)
		panes.mu.Lock()
		panes.screen = modelAnswer("/model sonnet", "Set model to Sonnet 5.5 and saved as your default for new sessions")
		panes.mu.Unlock()
		postModelSwitch(t, store, target.Key, "sonnet")
	}()
	start := time.Now()
	if err := m.SetModel(ctx, target.Key, "sonnet"); err != nil {
		t.Fatal(err)
	}
	if time.Since(start) < 250*time.Millisecond {
		t.Error("SetModel returned before Claude confirmed")
	}
	if rec, _ := store.Sessions.Get(target.Key); rec.Model != "sonnet" {
		t.Errorf("model = %q", rec.Model)
	}
	// The same command again: the old answer on the screen is not taken
	// for the new one.
	ctx2, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if err := m.SetModel(ctx2, target.Key, "sonnet"); err == nil {
		t.Fatal("an earlier /model answer was taken for the new one")
	}
}

// postModelSwitch records what ccbridge's hook records for Claude's
// PostModelSwitch event.
func postModelSwitch(t *testing.T, store *state.Store, key, requested string) {
	t.Helper()
	if _, err := store.Sessions.Update(context.Background(), key, func(s *state.Session) error {
		s.ModelSwitches++
		s.SwitchRequested = requested
		return nil
	}); err != nil {
		t.Error(err)
	}
}

// Claude printing "Set model to" is not enough: the switch is what its
// PostModelSwitch hook reports.
func TestSetModelWaitsForThePostModelSwitchHook(t *testing.T) {
	m, panes, _, target := newManager(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	m.Ensure(context.Background(), target)
	panes.mu.Lock()
	panes.afterKey = func(f *fakePanes, k tmux.Key) {
		if k == tmux.KeyEnter && strings.Contains(f.ops[len(f.ops)-2], "paste %1 /model sonnet") {
			f.screen = modelAnswer("/model sonnet", "Set model to Sonnet 5.5 and saved as your default for new sessions")
		}
	}
	panes.mu.Unlock()
	if err := m.SetModel(ctx, target.Key, "sonnet"); err == nil {
		t.Fatal("SetModel reported a switch no hook confirmed")
	}
}

func TestSetModelWithoutConfirmationFails(t *testing.T) {
	m, _, _, target := newManager(t)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	m.Ensure(context.Background(), target)
	if err := m.SetModel(ctx, target.Key, "nosuchmodel"); err == nil {
		t.Fatal("an unconfirmed model switch reported success")
	}
}

func cfgPromptTimeout(m *Manager) time.Duration { return m.config().Claude.PromptTimeout.Duration }

// On a loaded machine the screen shows a turn seconds after its
// UserPromptSubmit was recorded: an Escape pressed before that interrupts
// nothing, so InterruptTurn waits for the turn to show (or to end), however
// long that takes within its bound.
func TestInterruptTurnWaitsForATurnTheScreenShowsLate(t *testing.T) {
	t.Parallel()
	m, panes, store, target := newManager(t)
	ctx := context.Background()
	m.Ensure(ctx, target)
	store.Sessions.Update(ctx, target.Key, func(s *state.Session) error { s.Busy = true; return nil })
	panes.takeOps()
	busy := strings.Replace(readyScreen, "? for shortcuts", "esc to interrupt", 1)
	escapeOnBusy := make(chan bool, 4)
	panes.mu.Lock()
	panes.afterKey = func(f *fakePanes, k tmux.Key) {
		if k == tmux.KeyEscape {
			escapeOnBusy <- Busy(f.screen)
			f.screen = readyScreen // an Escape on a running turn ends it
		}
	}
	panes.mu.Unlock()
	go func() {
		time.Sleep(turnShow + time.Second) // longer than the old fixed wait
		panes.mu.Lock()
		panes.screen = busy
		panes.mu.Unlock()
	}()
	if err := m.InterruptTurn(ctx, target.Key); err != nil {
		t.Fatal(err)
	}
	if onBusy := <-escapeOnBusy; !onBusy {
		t.Fatal("Escape was pressed before the screen showed the turn: it interrupted nothing")
	}
	// A turn whose end is recorded meanwhile is not waited for.
	store.Sessions.Update(ctx, target.Key, func(s *state.Session) error { s.Busy = true; return nil })
	go func() {
		time.Sleep(200 * time.Millisecond)
		store.Sessions.Update(ctx, target.Key, func(s *state.Session) error { s.Busy = false; return nil })
	}()
	start := time.Now()
	if err := m.InterruptTurn(ctx, target.Key); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited > turnShowMax/2 {
		t.Errorf("waited %s for a turn that had ended", waited)
	}
}

// A frame without "esc to interrupt" while an Escape lands is no proof the
// turn stopped: Interrupt presses again when the turn shows again.
func TestInterruptIsNotFooledByARedraw(t *testing.T) {
	m, panes, store, target := newManager(t)
	ctx := context.Background()
	m.Ensure(ctx, target)
	store.Sessions.Update(ctx, target.Key, func(s *state.Session) error { s.Busy = true; return nil })
	panes.takeOps()
	busy := strings.Replace(readyScreen, "? for shortcuts", "esc to interrupt", 1)
	escapes := 0
	panes.mu.Lock()
	panes.screen = busy
	panes.afterKey = func(f *fakePanes, k tmux.Key) {
		if k != tmux.KeyEscape {
			return
		}
		escapes++
		f.screen = readyScreen
		if escapes == 1 { // the first lands in a redraw: the turn runs on
			go func() {
				time.Sleep(100 * time.Millisecond)
				panes.mu.Lock()
				panes.screen = busy
				panes.mu.Unlock()
			}()
		}
	}
	panes.mu.Unlock()
	if err := m.Interrupt(ctx, target.Key); err != nil {
		t.Fatal(err)
	}
	panes.mu.Lock()
	defer panes.mu.Unlock()
	if escapes != 2 || Busy(panes.screen) {
		t.Fatalf("%d Escapes, busy at the end: %v", escapes, Busy(panes.screen))
	}
}

// A slow redraw still shows the footer of the turn an Escape has just ended;
// Claude's "Interrupted" line under the prompt says it ended, and a second
// Escape (on an idle prompt, Esc Esc opens the rewind menu) is not pressed.
func TestInterruptStopsAtClaudesInterruptedLine(t *testing.T) {
	m, panes, store, target := newManager(t)
	ctx := context.Background()
	m.Ensure(ctx, target)
	store.Sessions.Update(ctx, target.Key, func(s *state.Session) error { s.Busy = true; return nil })
	panes.takeOps()
	busy := strings.Replace(readyScreen, "? for shortcuts", "esc to interrupt", 1)
	panes.mu.Lock()
	panes.screen = "❯ an earlier prompt\n  ⎿  " + interruptedMark + "\n" + busy
	panes.afterKey = func(f *fakePanes, k tmux.Key) {
		if k == tmux.KeyEscape {
			f.screen = "❯ an earlier prompt\n  ⎿  " + interruptedMark + "\n❯ this prompt\n  ⎿  " + interruptedMark + "\n" + busy
		}
	}
	panes.mu.Unlock()
	if err := m.Interrupt(ctx, target.Key); err != nil {
		t.Fatal(err)
	}
	if ops := panes.takeOps(); !slices.Equal(ops, []string{"keys %1 Escape"}) {
		t.Fatalf("ops = %q", ops)
	}
}
