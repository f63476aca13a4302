package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ccbridge/ccbridge/internal/agent/codex"
	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/tmux"
)

// ErrDialogGone says the dialog a card stands for is not on the screen
// (answered in the terminal first, or its turn ended): nothing was pressed.
var ErrDialogGone = errors.New("the dialog is no longer on the screen")

// keyedDialogWait bounds the wait for the dialog a decided card stands
// for: Codex draws it once its PermissionRequest hook returned, which may
// be after a quick click on a loaded machine.
var keyedDialogWait = 10 * time.Second

// PressAnswer takes a decided request whose agent answers by keys
// (state.Request.Keys: Codex's approval dialog) to its session's pane: the
// choice's key, pressed only while that dialog, asking about that
// command, is on the screen (read first, then checked by tmux as it
// sends). Deny is the dialog's No (Escape, which ends Codex's turn);
// instructions, when given, are then typed as the next message. For
// Always it returns the prefix Codex said it will not ask about again.
func (m *Manager) PressAnswer(ctx context.Context, req state.Request, instructions string) (always string, err error) {
	if req.Keys != config.AgentCodex || req.Status != state.RequestDecided {
		return "", fmt.Errorf("request of %q, %s: not one answered by keys", req.Keys, req.Status)
	}
	var d claudehook.Decision
	if err := json.Unmarshal(req.Decision, &d); err != nil {
		return "", fmt.Errorf("decision: %w", err)
	}
	pane, unlock, err := m.lockedPane(ctx, req.Session)
	if err != nil {
		return "", err
	}
	defer unlock()
	if a, err := m.agentOf(req.Session); err != nil || a.Name() != config.AgentCodex {
		return "", fmt.Errorf("the session does not run Codex: %w", err)
	}
	switch req.ToolName {
	case questionTool:
		return "", m.pressQuestions(ctx, pane, req, d, instructions)
	case planTool:
		return "", m.pressPlan(ctx, pane, req, d, instructions)
	}
	var in struct {
		Command string `json:"command"`
	}
	if err := json.Unmarshal(req.ToolInput, &in); err != nil || in.Command == "" {
		return "", fmt.Errorf("no command in the request's input: %w", err)
	}
	var dialog codex.Approval
	_, err = m.waitScreen(ctx, pane, keyedDialogWait, func(s string) bool {
		var ok bool
		dialog, ok = codex.ReadApproval(s, in.Command)
		return ok
	})
	switch {
	case errors.Is(err, errScreenWait):
		return "", ErrDialogGone
	case err != nil:
		return "", err
	}
	guard := tmux.Guard{With: []string{codex.ApprovalQuestion, codex.CommandMark(in.Command)}}
	press := func(choice string, k tmux.Key) error {
		g := guard
		if choice != "" {
			g.With = append(g.With, choice)
		}
		if err := m.opt.Panes.SendKeysIf(ctx, pane, g, k); err != nil {
			if errors.Is(err, tmux.ErrRefused) {
				return fmt.Errorf("%w: %w", ErrDialogGone, err)
			}
			return err
		}
		return nil
	}
	switch {
	case d.Behavior == "allow" && req.Always:
		if dialog.Always == "" {
			return "", errors.New("Codex's dialog offers no \"don't ask again\" for this command")
		}
		err = press(codex.AlwaysChoice, codex.AlwaysKey)
	case d.Behavior == "allow":
		err = press(codex.AllowChoice, codex.AllowKey)
	default:
		err = press("", tmux.KeyEscape)
	}
	if err != nil {
		return "", err
	}
	m.opt.Log.Info("a card's answer was pressed into Codex's dialog", "session", req.Session, "behavior", d.Behavior, "always", req.Always)
	if d.Behavior != "allow" && instructions != "" {
		if err := m.typeAfterNo(ctx, req.Session, pane, instructions); err != nil {
			return "", fmt.Errorf("the instructions: %w", err)
		}
	}
	return dialog.Always, nil
}

// typeAfterNo types a Deny's instructions as the next message once Codex's
// No has ended the turn and its composer is back.
func (m *Manager) typeAfterNo(ctx context.Context, key, pane, text string) error {
	scr, err := m.agentOf(key)
	if err != nil {
		return err
	}
	if _, err := m.waitScreen(ctx, pane, keyedDialogWait, scr.InputReady); err != nil {
		return err
	}
	_, err = m.submit(ctx, key, pane, text)
	return err
}

// questionTool is the card a Codex question (request_user_input) gets:
// Claude's question card, which has the same shape (internal/hook).
const questionTool = "AskUserQuestion"

// pressQuestions answers Codex's question dialog from a question card:
// each question's answer by its option's digit, only while that question
// is on the screen (tmux checks its heading, the hint and the option as it
// sends). A reply in chat instead is Escape, then the reply typed.
func (m *Manager) pressQuestions(ctx context.Context, pane string, req state.Request, d claudehook.Decision, instructions string) error {
	var in claudehook.AskInput
	if err := json.Unmarshal(req.ToolInput, &in); err != nil || len(in.Questions) == 0 {
		return fmt.Errorf("no questions in the request's input: %w", err)
	}
	n := len(in.Questions)
	shown := func(i int) error {
		_, err := m.waitScreen(ctx, pane, keyedDialogWait, func(s string) bool { return codex.QuestionShown(s, i, n, in.Questions[i].Question) })
		if errors.Is(err, errScreenWait) {
			return ErrDialogGone
		}
		return err
	}
	send := func(g tmux.Guard, k tmux.Key) error {
		if err := m.opt.Panes.SendKeysIf(ctx, pane, g, k); err != nil {
			if errors.Is(err, tmux.ErrRefused) {
				return fmt.Errorf("%w: %w", ErrDialogGone, err)
			}
			return err
		}
		return nil
	}
	if d.Behavior != "allow" {
		if err := shown(0); err != nil {
			return err
		}
		if err := send(tmux.Guard{With: []string{codex.QuestionMark(0, n), codex.QuestionHint}}, tmux.KeyEscape); err != nil {
			return err
		}
		if instructions == "" {
			return nil
		}
		return m.typeAfterNo(ctx, req.Session, pane, instructions)
	}
	for i, q := range in.Questions {
		k := slices.IndexFunc(q.Options, func(o claudehook.QuestionOption) bool { return o.Label == req.Answers[q.Question] })
		key, label, ok := codex.OptionKey(k, req.Answers[q.Question])
		if !ok {
			return fmt.Errorf("the answer to %q is not one of Codex's options", q.Question)
		}
		if err := shown(i); err != nil {
			return err
		}
		if err := send(tmux.Guard{With: []string{codex.QuestionMark(i, n), codex.QuestionHint, label}}, tmux.Key(key)); err != nil {
			return err
		}
	}
	m.opt.Log.Info("a question card's answers were pressed into Codex's dialog", "session", req.Session, "questions", n)
	return nil
}

// planTool is the card a Codex plan gets: Claude's plan card (internal/hook).
const planTool = "ExitPlanMode"

// pressPlan answers Codex's "Implement this plan?" dialog from a plan card:
// Yes (1), or No, stay in Plan mode (3) with the feedback then typed as
// the next message, each only while the dialog is on the screen.
func (m *Manager) pressPlan(ctx context.Context, pane string, req state.Request, d claudehook.Decision, feedback string) error {
	if _, err := m.waitScreen(ctx, pane, keyedDialogWait, codex.PlanShown); err != nil {
		if errors.Is(err, errScreenWait) {
			return ErrDialogGone
		}
		return err
	}
	choice, key := codex.PlanYes, codex.PlanYesKey
	if d.Behavior != "allow" {
		choice, key = codex.PlanNo, codex.PlanNoKey
	}
	if err := m.opt.Panes.SendKeysIf(ctx, pane, tmux.Guard{With: []string{codex.PlanQuestion, codex.PlanHint, choice}}, tmux.Key(key)); err != nil {
		if errors.Is(err, tmux.ErrRefused) {
			return fmt.Errorf("%w: %w", ErrDialogGone, err)
		}
		return err
	}
	m.opt.Log.Info("a plan card's answer was pressed into Codex's dialog", "session", req.Session, "behavior", d.Behavior)
	if d.Behavior == "allow" || feedback == "" {
		return nil
	}
	return m.typeAfterNo(ctx, req.Session, pane, feedback)
}
