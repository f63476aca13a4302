package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ccbridge/ccbridge/internal/agent/codex"
	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/tmux"
)

// ErrDialogGone says the dialog a card stands for left the screen as its
// key was pressed (answered in the terminal first, or its turn ended):
// nothing was pressed.
var ErrDialogGone = errors.New("the dialog is no longer on the screen")

// ErrBroadAlways says Always was refused: Codex's prefix is only a shell or
// an interpreter, and its rule would hold for every project on the machine.
var ErrBroadAlways = errors.New("Always refused")

// ErrDialogUnseen says the dialog a card stands for never showed (taller
// than the pane, or another dialog in front): nothing was pressed, and
// Codex may still be waiting on it.
var ErrDialogUnseen = errors.New("could not see Codex's dialog")

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
	// The wait for the dialog holds no lock of the session: the guarded
	// press is what must not interleave with other input.
	pane, err := m.pane(ctx, req.Session)
	if err != nil {
		return "", err
	}
	if a, err := m.agentOf(req.Session); err != nil || a.Name() != config.AgentCodex {
		return "", fmt.Errorf("the session does not run Codex: %w", err)
	}
	switch req.ToolName {
	case questionTool, planTool:
		unlock, err := m.lock(ctx, req.Session)
		if err != nil {
			return "", err
		}
		defer unlock()
		if req.ToolName == planTool {
			return "", m.pressPlan(ctx, pane, req, d, instructions)
		}
		return "", m.pressQuestions(ctx, pane, req, d, instructions)
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
		return "", ErrDialogUnseen
	case err != nil:
		return "", err
	}
	unlock, err := m.lock(ctx, req.Session)
	if err != nil {
		return "", err
	}
	defer unlock()
	press := func(choice string, k tmux.Key, lines ...string) error {
		g := tmux.Guard{With: []string{codex.ApprovalQuestion}, Lines: append(slices.Clone(dialog.Lines), lines...)}
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
		if codex.BroadPrefix(dialog.Always) {
			return "", fmt.Errorf("%w: Codex would no longer ask about any command that starts with `%s`, in every project on this machine; answer with Allow in the terminal or /screen", ErrBroadAlways, dialog.Always)
		}
		err = press(codex.AlwaysChoice, codex.AlwaysKey, dialog.AlwaysLines...)
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
			return ErrDialogUnseen
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
		answer := req.Answers[q.Question]
		if err := shown(i); err != nil {
			return err
		}
		k := slices.IndexFunc(q.Options, func(o claudehook.QuestionOption) bool { return o.Label == answer })
		if k < 0 {
			// A text of the person's own (Other): Codex's "None of the
			// above", with the text as its note.
			if err := m.pressNote(ctx, pane, i, n, len(q.Options), answer, send); err != nil {
				return err
			}
			continue
		}
		key, label, ok := codex.OptionKey(k, answer)
		if !ok {
			return fmt.Errorf("the answer to %q has no key in Codex's dialog", q.Question)
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
			return ErrDialogUnseen
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

// highlighted reads which choice (from 1) Codex's question dialog has
// highlighted: the "› N." line after the question's heading.
var highlighted = regexp.MustCompile(`(?m)^\s*› (\d+)\. `)

// pressNote answers question i of n with Codex's "None of the above"
// (after its options) and text as its note: the highlight is moved there
// with ↓, Tab opens the note, the text is pasted, Enter submits, each only
// while that question (and, for the text, its notes field) is on the
// screen.
func (m *Manager) pressNote(ctx context.Context, pane string, i, n, options int, text string, send func(tmux.Guard, tmux.Key) error) error {
	mark := codex.QuestionMark(i, n)
	none := "› " + strconv.Itoa(options+1) + ". " + codex.NoneOfAbove
	on := func(s string) (int, bool) {
		_, rest, ok := strings.Cut(s, mark+" ")
		if !ok || !strings.Contains(rest, codex.QuestionHint) {
			return 0, false
		}
		sel := highlighted.FindStringSubmatch(rest)
		if sel == nil {
			return 0, false
		}
		at, _ := strconv.Atoi(sel[1])
		return at, true
	}
	for range options + 1 {
		screen, err := m.opt.Panes.Capture(ctx, pane, 0)
		if err != nil {
			return err
		}
		at, ok := on(screen)
		if !ok {
			return ErrDialogGone
		}
		if at == options+1 {
			break
		}
		if err := send(tmux.Guard{With: []string{mark, codex.QuestionHint}}, tmux.KeyDown); err != nil {
			return err
		}
		if _, err := m.waitScreen(ctx, pane, keyRedraw, func(s string) bool { now, ok := on(s); return !ok || now != at }); err != nil {
			return err
		}
	}
	if err := send(tmux.Guard{With: []string{mark, codex.QuestionHint, none}}, tmux.KeyTab); err != nil {
		return err
	}
	notes := tmux.Guard{With: []string{mark, codex.NotesHint, none}}
	if _, err := m.waitScreen(ctx, pane, keyRedraw, func(s string) bool { return strings.Contains(s, codex.NotesHint) }); err != nil {
		return ErrDialogGone
	}
	if err := m.opt.Panes.PasteTextIf(ctx, pane, notes, text); err != nil {
		return refused(err)
	}
	if _, err := m.waitScreen(ctx, pane, pasteShow, func(s string) bool { return strings.Contains(squeezeSpace(s), squeezeSpace(firstLine(text))) }); err != nil {
		return err
	}
	return send(notes, tmux.KeyEnter)
}

// squeezeSpace drops white space, which Codex's wrapping moves.
func squeezeSpace(s string) string { return strings.Join(strings.Fields(s), "") }
