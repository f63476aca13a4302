package hook

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/codexhook"
	"github.com/ccbridge/ccbridge/internal/state"
)

// A message injected into a running Codex turn continues it under the
// same turn_id, and its reply is recorded as turn_id@n (codexReplyID). Its
// events are keyed the same way, so the continuation has a live progress
// card of its own (the first reply's ended with its Stop) and a start the
// long-turn ping is timed from, as a Claude turn has.

// codexContinuation keys a Codex turn event to the reply it belongs to,
// as the rollout stands (codexhook.ReplyNow), and notes the start of a
// continuation at its first event: its UserPromptSubmit, or its first
// tool call if that hook came first. A UserPromptSubmit keeps the turn_id
// it is received and claimed by.
func (h *handler) codexContinuation(ctx context.Context, in *claudehook.Input) {
	if in.Agent != agentCodex || in.TurnID == "" || in.SessionID == "" || in.TranscriptPath == "" {
		return
	}
	prompt := ""
	switch in.HookEventName {
	case claudehook.EventUserPromptSubmit:
		prompt = in.Prompt
		if strings.TrimSpace(prompt) == "" {
			return
		}
	case claudehook.EventPreToolUse, claudehook.EventPostToolUse, claudehook.EventPostToolUseFailure, claudehook.EventPermissionRequest:
	default:
		return
	}
	n, err := codexhook.ReplyNow(in.TranscriptPath, in.TurnID, prompt)
	if err != nil || n <= 1 {
		return
	}
	key := codexReplyKey(in.TurnID, n)
	if _, err := h.store.Seen.Create(ctx, turnStartKey(in.SessionID, key), state.Seen{At: time.Now().UTC()}); err != nil {
		h.log.Warn("continuation's start not recorded", "err", err)
	}
	if in.HookEventName != claudehook.EventUserPromptSubmit {
		in.PromptID = key
	}
}

// liveRepliesEnded closes the activity of each reply a Stop posts: for
// Codex, replies from..n of the turn (one Stop may end several), for
// Claude the turn's.
func (h *handler) liveRepliesEnded(ctx context.Context, in *claudehook.Input, sess state.Session) error {
	if in.Agent != agentCodex || h.replyID == "" {
		return h.liveTurnEnded(ctx, in, sess)
	}
	last := 1
	if _, n, ok := strings.Cut(h.replyID, "@"); ok {
		last, _ = strconv.Atoi(n)
	}
	var errs []error
	for k := max(h.replyFrom, 1); k <= last; k++ {
		reply := *in
		reply.PromptID = codexReplyKey(in.TurnID, k)
		errs = append(errs, h.liveTurnEnded(ctx, &reply, sess))
	}
	return errors.Join(errs...)
}

// turnStartID is the prompt id whose start times a turn's ping: for a Codex
// Stop, the first reply it posts (one Stop may end a reply and the
// continuations injected before it was written); else the turn's own.
func (h *handler) turnStartID(turn state.Turn) string {
	if h.replyID == "" || h.replyFrom < 1 {
		return turn.PromptID
	}
	base, _, _ := strings.Cut(turn.PromptID, "@")
	return codexReplyKey(base, h.replyFrom)
}
