package hook

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"

	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/codexhook"
	"github.com/ccbridge/ccbridge/internal/state"
)

// byKeys makes a Codex permission request one the daemon answers with the
// keys of Codex's own dialog (state.Request.Keys). Codex runs the
// PermissionRequest hook before its dialog and hides the dialog while the
// hook waits (agents.md §1.3.4); a hook that returns at once with no
// decision lets the dialog come up, so the terminal and the card both
// answer, first wins. No hook process stays to watch the request.
func byKeys(in *claudehook.Input, req *state.Request) {
	if in.Agent == agentCodex {
		req.Keys, req.HookPID = agentCodex, 0
	}
}

// sameKeyedCall is sameCall for a request answered by keys: Codex's
// PermissionRequest adds the model's justification as description, which
// its PostToolUse leaves out (agents.md §1.3.2).
func sameKeyedCall(r state.Request, post json.RawMessage) bool {
	var x, y map[string]any
	if json.Unmarshal(r.ToolInput, &x) != nil || json.Unmarshal(post, &y) != nil || x == nil || y == nil {
		return false
	}
	delete(x, "description")
	delete(y, "description")
	return reflect.DeepEqual(x, y)
}

// dismissKeyed closes the pending keyed cards of a Codex session whose
// turn an Escape ended (the Interrupt hook): the dialog's No, pressed in
// the terminal, or a /stop. Their dialog is gone with the turn.
func (h *handler) dismissKeyed(ctx context.Context, in *claudehook.Input) error {
	return h.closeKeyed(ctx, in, func(state.Request) bool { return true }, state.RequestInterrupted, "prompt dismissed in the terminal")
}

// closeKeyed closes the session's pending keyed cards that match, as
// status (the terminal answered them), each audited and its card edited.
func (h *handler) closeKeyed(ctx context.Context, in *claudehook.Input, match func(state.Request) bool, status, why string) error {
	all, err := h.store.Requests.List()
	if err != nil && len(all) == 0 {
		return err
	}
	var errs []error
	for id, r := range all {
		if r.Keys == "" || r.Status != state.RequestPending || r.ClaudeSessionID != in.SessionID || !match(r) {
			continue
		}
		r, err := h.store.Requests.Update(ctx, id, func(r *state.Request) error {
			if r.Status != state.RequestPending {
				return errNotPending
			}
			r.Status = status
			return nil
		})
		if errors.Is(err, errNotPending) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		h.log.Info(why, "request", id)
		h.auditRequest(r)
		h.editCard(ctx, id, r, nil)
	}
	return errors.Join(errs...)
}

// codexQuestionTool is the tool Codex asks its questions with (Plan mode
// only); its PreToolUse reports it, then Codex shows its question dialog.
const codexQuestionTool = "request_user_input"

// codexQuestion posts Codex's question as Claude's question card (the
// same shape: questions with a header and labelled options), answered
// with the dialog's keys like a permission card. Its PostToolUse retires
// the card when the terminal answered first (cardTool).
func (h *handler) codexQuestion(ctx context.Context, in *claudehook.Input, sess state.Session) error {
	q := *in
	q.ToolName = askTool
	return h.permission(ctx, &q, sess)
}

// isCodexQuestion reports whether a PreToolUse is Codex's question.
func isCodexQuestion(in *claudehook.Input) bool {
	return in.Agent == agentCodex && in.ToolName == codexQuestionTool
}

// cardTool is the tool a card of the call stands under.
func cardTool(in *claudehook.Input) string {
	if isCodexQuestion(in) {
		return askTool
	}
	return in.ToolName
}

// askTool is the tool whose card is a question card.
const askTool = "AskUserQuestion"

// planTool is the tool whose card is a plan card.
const planTool = "ExitPlanMode"

// codexPlan posts the plan a Codex turn proposed (Plan mode) as a plan
// card answered with the keys of the "Implement this plan?" dialog Codex
// opens after Stop. Codex has no hook for that dialog (agents.md §1.7):
// the plan is read from the rollout.
func (h *handler) codexPlan(ctx context.Context, in *claudehook.Input, sess state.Session) error {
	if in.Agent != agentCodex || in.TranscriptPath == "" {
		return nil
	}
	plan, found, err := codexhook.PlanOf(in.TranscriptPath, in.TurnID)
	if err != nil || !found {
		return err
	}
	input, err := json.Marshal(claudehook.PlanInput{Plan: plan})
	if err != nil {
		return err
	}
	q := *in
	q.ToolName, q.ToolInput = planTool, input
	return h.permission(ctx, &q, sess)
}

// retireCodexPlans closes a session's pending plan cards when a prompt
// reaches Codex: its "Implement this plan?" dialog was answered in the
// terminal (its Yes submits "Implement the plan."), since no prompt goes in
// while it is up.
func (h *handler) retireCodexPlans(ctx context.Context, in *claudehook.Input) error {
	if in.Agent != agentCodex {
		return nil
	}
	return h.closeKeyed(ctx, in, func(r state.Request) bool { return r.ToolName == planTool }, state.RequestTerminal, "plan answered in the terminal")
}
