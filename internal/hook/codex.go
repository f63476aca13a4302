package hook

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/codexhook"
	"github.com/ccbridge/ccbridge/internal/state"
)

// agentCodex is claudehook.Input.Agent for Codex CLI.
const agentCodex = "codex"

// fromAgent reads a Codex payload into Claude's terms when the hook's
// command line says Codex runs it (codexhook.AgentFlag; a payload never
// decides): its turn_id is the prompt id a turn is claimed by.
func fromAgent(in *claudehook.Input, args []string) {
	if !slices.Contains(args, codexhook.AgentFlag) {
		return
	}
	in.Agent = agentCodex
	if in.PromptID == "" {
		in.PromptID = in.TurnID
	}
}

// decisionFor is the decision as the agent takes it. Codex's
// PermissionRequest takes allow, or deny with a message, and fails closed
// on anything more (updatedInput, updatedPermissions, interrupt; agents.md
// §1.3.3): those are left out, so an answer still counts as allow or deny.
func decisionFor(in *claudehook.Input, d claudehook.Decision, log *slog.Logger) claudehook.Decision {
	if in.Agent != agentCodex {
		return d
	}
	if len(d.UpdatedInput) > 0 || len(d.UpdatedPermissions) > 0 || d.Interrupt {
		log.Warn("Codex takes allow or deny only; the rest of the decision is left out", "behavior", d.Behavior)
	}
	return claudehook.Decision{Behavior: d.Behavior, Message: d.Message}
}

// policyFor is a [policy] verdict as the agent takes it from PreToolUse.
// Codex takes deny with a reason but not ask (unsupported: the call would
// run), so what a rule would ask about is refused, saying why.
func policyFor(in *claudehook.Input, decision, reason string) (string, string) {
	if in.Agent != agentCodex || decision != "ask" {
		return decision, reason
	}
	return "deny", reason + " (Codex cannot ask from a hook, so the call is refused; run it in the terminal yourself if it is right)"
}

// agentName names the agent in what the hooks post.
func agentName(in *claudehook.Input) string {
	if in.Agent == agentCodex {
		return "Codex"
	}
	return "Claude"
}

// agentTitle is agentName where the payload is not at hand: the agent
// as the hook's command line says (fromAgent).
func (h *handler) agentTitle() string {
	var in claudehook.Input
	fromAgent(&in, h.args)
	return agentName(&in)
}

// transcriptReply reads the turn's whole reply from the agent's transcript;
// found is false until it holds the reply's last message.
func (h *handler) transcriptReply(in *claudehook.Input) (string, bool, error) {
	if in.Agent == agentCodex {
		return codexhook.FinalReply(in.TranscriptPath, in.TurnID, in.LastAssistantMessage, max(h.replyFrom, 1))
	}
	return claudehook.FinalReply(in.TranscriptPath, in.LastAssistantMessage, in.PromptID)
}

// codexReplyID is the prompt id a Codex reply is recorded under. A
// message injected into a running turn continues it (agents.md §1.7), so
// a turn may hold several replies, each ended by a Stop with the same
// turn_id (issue 29): the first is recorded under the turn_id, the n-th
// under turn_id@n. So each is posted once, and none is taken for a repeat
// of the one before. from is the turn's first reply not recorded yet (one
// Stop may end several: those post together). found is false when the
// rollout does not hold the reply: the turn_id it is then. With wait, a
// reply of a turn recorded already is waited for; a first reply is not
// held back by the wait.
func (h *handler) codexReplyID(ctx context.Context, in *claudehook.Input, wait bool) (id string, from int, found bool) {
	if in.TranscriptPath == "" || strings.TrimSpace(in.LastAssistantMessage) == "" {
		return in.TurnID, 1, false
	}
	var n int
	try := func() (bool, error) {
		var err error
		n, found, err = codexhook.ReplyOf(in.TranscriptPath, in.TurnID, in.LastAssistantMessage)
		return found, err
	}
	_, err := try()
	if err == nil && !found && wait && h.codexReplyRecorded(in, 1) {
		err = awaitTranscript(ctx, in.TranscriptPath, try)
	}
	if err != nil || !found {
		h.log.Debug("reply not in the rollout; taken as the turn's first", "turn", in.TurnID, "err", err)
		return in.TurnID, 1, false
	}
	from = n
	for from > 1 && !h.codexReplyRecorded(in, from-1) {
		from--
	}
	return codexReplyKey(in.TurnID, n), from, true
}

// codexReplyKey names the n-th reply of Codex turn turnID (codexReplyID).
func codexReplyKey(turnID string, n int) string {
	if n <= 1 {
		return turnID
	}
	return turnID + "@" + strconv.Itoa(n)
}

func (h *handler) codexReplyRecorded(in *claudehook.Input, n int) bool {
	_, err := h.store.Turns.Get(state.TurnKey(in.SessionID, codexReplyKey(in.TurnID, n)))
	return err == nil
}

// textBefore reads what the model wrote before the tool call in.ToolUseID,
// as text blocks of one message id (for de-duplication). A Codex message
// before a call belongs to that call alone, so the call's id serves.
func textBefore(in *claudehook.Input) (msgID string, blocks []claudehook.IndexedText, found bool, err error) {
	if in.Agent != agentCodex {
		return claudehook.TextBefore(in.TranscriptPath, in.ToolUseID)
	}
	msgs, found, err := codexhook.TextBefore(in.TranscriptPath, in.ToolUseID)
	for i, m := range msgs {
		blocks = append(blocks, claudehook.IndexedText{Index: i, Text: m.Text})
	}
	return in.ToolUseID, blocks, found, err
}

// noCost ends a Codex footer: Codex reports tokens but no cost, and a
// footer without one would read as if it were free.
const noCost = "no cost: Codex reports none"

// codexFooter is a Codex reply's footer: the model and the context in use
// from the rollout's last token_count (agents.md §1.5). It has the turn's
// own figures: Codex writes them before it fires Stop.
func (h *handler) codexFooter(sess state.Session) string {
	if sess.TranscriptPath == "" {
		return ""
	}
	u, ok, err := codexhook.LastUsage(sess.TranscriptPath)
	if err != nil || !ok {
		h.log.Debug("no usage in the rollout", "err", err)
		return ""
	}
	st := state.Status{Model: u.Model, ModelID: u.Model}
	if u.Window > 0 {
		st.ContextPct, st.HasContext = 100*float64(u.Tokens)/float64(u.Window), true
	}
	return "-# " + StatusText(st, time.Now()) + " · " + noCost
}
