package session

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/tmux"
)

// modeCycle is the order Shift+Tab walks the permission modes in 2.1.328.
var modeCycle = []string{"default", "acceptEdits", "plan", "auto"}

// modeShow bounds the wait for the footer to show the mode a Shift+Tab chose.
const modeShow = 3 * time.Second

// SetMode switches a running session's permission mode with Shift+Tab,
// following Claude's footer: one press at a time, each only into the input
// box (never a dialog, checked by tmux as the key is sent), the next only
// after the footer changed, until it shows the mode. The footer, not a
// count of presses, says where the cycle is (2.1.328: manual → accept
// edits → plan → auto). bypassPermissions and dontAsk are not on that
// cycle: they need a restart.
func (m *Manager) SetMode(ctx context.Context, key, mode string) error {
	if err := m.claudeOnly(key, "switching the permission mode"); err != nil {
		return err
	}
	unlock, err := m.lock(ctx, key)
	if err != nil {
		return err
	}
	defer unlock()
	if !slices.Contains(modeCycle, mode) {
		return fmt.Errorf("switching to %s is not possible in a running session; start it with that mode in the config", mode)
	}
	pane, err := m.pane(ctx, key)
	if err != nil {
		return err
	}
	screen, err := m.waitScreen(ctx, pane, modeShow, func(s string) bool { return ModeShown(s) != "" || !InputBoxShown(s) })
	if err != nil {
		return fmt.Errorf("cannot read the permission mode in Claude's footer: %w", err)
	}
	shown := ModeShown(screen)
	if !slices.Contains(modeCycle, shown) && InputBoxShown(screen) {
		return fmt.Errorf("switching from %s to %s is not possible in a running session; start it with that mode in the config", shown, mode)
	}
	for presses := 0; shown != mode; presses++ {
		if !InputBoxShown(screen) {
			return ErrDialogOpen
		}
		if presses == len(modeCycle) {
			return fmt.Errorf("the footer never showed %s after Shift+Tab (it shows %s)", mode, shown)
		}
		if err := m.keyIf(ctx, pane, tmux.KeyShiftTab); err != nil {
			return err
		}
		prev := shown
		if screen, err = m.waitScreen(ctx, pane, modeShow, func(s string) bool { return ModeShown(s) != prev || !InputBoxShown(s) }); err != nil {
			return fmt.Errorf("the footer still shows %s after Shift+Tab: %w", prev, err)
		}
		shown = ModeShown(screen)
	}
	_, err = m.opt.Store.Sessions.Update(ctx, key, func(s *state.Session) error { s.PermissionMode, s.ModeSeen = mode, mode; return nil })
	return err
}

// SetModel switches the running session's model with Claude's own /model
// command and completes what Claude asks on the way: once a conversation
// is cached, Claude first asks "Switch model? … 1. Yes, switch to …", and
// ccbridge answers 1 (pressed only while that dialog is what tmux shows).
// It returns when Claude's answer is on the screen: "Set model to …" is
// success; "Kept model as …" or anything else is reported as an error.
func (m *Manager) SetModel(ctx context.Context, key, model string) error {
	if err := m.claudeOnly(key, "switching the model"); err != nil {
		return err
	}
	unlock, err := m.lock(ctx, key)
	if err != nil {
		return err
	}
	err = m.setModel(ctx, key, model)
	unlock()
	if err != nil {
		return err
	}
	_, err = m.opt.Store.Sessions.Update(ctx, key, func(s *state.Session) error { s.Model = model; return nil })
	return err
}

// switchDialog is the confirmation /model opens on a cached conversation.
var switchDialog = tmux.Guard{With: []string{"Switch model?", "Enter to confirm"}}

// modelAnswers are the lines Claude prints under a /model command.
var modelAnswers = []string{"Set model to ", "Kept model as ", "Couldn't switch model", "Model not found", "Invalid model"}

func (m *Manager) setModel(ctx context.Context, key, model string) error {
	pane, err := m.pane(ctx, key)
	if err != nil {
		return err
	}
	rec, err := m.opt.Store.Sessions.Get(key)
	if err != nil {
		return err
	}
	switches := rec.ModelSwitches
	cmd := "/model " + model
	// The echo is read only to say what Claude answered when no switch
	// comes; counting earlier echoes tells ours from an identical older one.
	seen := func() (int, string) {
		all, err := m.opt.Panes.Capture(ctx, pane, modelHistory)
		if err != nil {
			return 0, ""
		}
		return echoAnswer(all, cmd)
	}
	echoes, _ := seen()
	if _, err := m.submit(ctx, key, pane, cmd); err != nil {
		return err
	}
	deadline := time.Now().Add(modelConfirm)
	var pressed time.Time
	for {
		// Claude's PostModelSwitch hook says the switch happened; the
		// screen is read only for an answer that is not a switch ("Kept
		// model as …", an unknown model), so that it is reported at once.
		if rec, err := m.opt.Store.Sessions.Get(key); err == nil && rec.ModelSwitches > switches {
			if rec.SwitchRequested != model {
				return fmt.Errorf("claude switched to %q, not %s", rec.SwitchRequested, model)
			}
			return nil
		}
		if n, answer := seen(); n > echoes && answer != "" && !strings.HasPrefix(answer, "Set model to ") {
			return fmt.Errorf("the model is not %s: Claude says %q", model, answer)
		}
		screen, err := m.opt.Panes.Capture(ctx, pane, 0)
		if err != nil {
			return err
		}
		// A dialog draws before it takes keys: press again if it stays.
		if strings.Contains(screen, "Switch model?") && time.Since(pressed) > time.Second {
			if err := m.opt.Panes.SendKeysIf(ctx, pane, switchDialog, "1"); err != nil && !errors.Is(err, tmux.ErrRefused) {
				return err
			}
			pressed = time.Now()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no switch by Claude to /model %s within %s (no PostModelSwitch hook); check /screen", model, modelConfirm)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(readyPoll):
		}
	}
}

// modelHistory is how many lines above the screen are searched for /model's echo.
const modelHistory = 500

// echoAnswer counts the transcript lines echoing cmd ("❯ /model sonnet")
// and returns the answer line under the last one, if it has come.
func echoAnswer(screen, cmd string) (int, string) {
	lines := strings.Split(screen, "\n")
	n, last := 0, -1
	for i, l := range lines {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "❯") && strings.TrimSpace(strings.TrimPrefix(t, "❯")) == cmd {
			// The input box holds the command before Enter: only echoes
			// that are not the box (no rule right above) count.
			if i > 0 && isRule(lines[i-1]) {
				continue
			}
			n, last = n+1, i
		}
	}
	if last < 0 {
		return n, ""
	}
	for _, l := range lines[last+1 : min(len(lines), last+4)] {
		t := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "⎿"))
		for _, a := range modelAnswers {
			if strings.HasPrefix(t, a) {
				return n, t
			}
		}
	}
	return n, ""
}

// modelConfirm bounds the wait for Claude's answer to /model.
const modelConfirm = 10 * time.Second
