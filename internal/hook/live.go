package hook

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/redact"
	"github.com/ccbridge/ccbridge/internal/state"
)

// Live progress (progress = "live"): the hooks record a turn's activity;
// the daemon draws it into one message per turn, edited in place and
// debounced per channel. The record, not the daemon, holds the message id,
// so a daemon restarted mid-turn keeps editing the same message.

const progressLive = "live"

func (h *handler) activities() (*state.Collection[state.Activity], error) {
	return state.OpenActivities(h.store.Dir)
}

// updateActivity changes the turn's record, creating it on first use, and
// counts the change for the daemon to draw.
func (h *handler) updateActivity(ctx context.Context, in *claudehook.Input, sess state.Session, fn func(a *state.Activity)) error {
	if in.SessionID == "" || in.PromptID == "" || sess.Channel() == "" {
		return nil
	}
	acts, err := h.activities()
	if err != nil {
		return err
	}
	_, err = acts.Update(ctx, state.TurnKey(in.SessionID, in.PromptID), func(a *state.Activity) error {
		if a.Started.IsZero() {
			a.SessionKey, a.Server, a.ChannelID, a.Started = h.session, sess.Server, sess.Channel(), time.Now().UTC()
			if st, err := h.store.Seen.Get(turnStartKey(in.SessionID, in.PromptID)); err == nil {
				a.Started = st.At
			}
		}
		if !a.Ended.IsZero() {
			return errTurnEnded
		}
		fn(a)
		a.Version++
		return nil
	})
	if errors.Is(err, errTurnEnded) {
		return nil
	}
	return err
}

var errTurnEnded = errors.New("turn ended")

// liveTool adds a tool call, and the text Claude wrote before it, to the
// turn's activity (PreToolUse).
func (h *handler) liveTool(ctx context.Context, in *claudehook.Input, sess state.Session, texts []string) error {
	now := time.Now().UTC()
	return h.updateActivity(ctx, in, sess, func(a *state.Activity) {
		var add []state.ActivityItem
		for _, t := range texts {
			if strings.TrimSpace(t) != "" {
				// Masked before Render cuts it.
				add = append(add, state.ActivityItem{Text: redact.String(t)})
			}
		}
		for i := range a.Items {
			if a.Items[i].ToolUseID == in.ToolUseID {
				// Recorded already (by PostToolUse, or before the
				// transcript had the text): the text goes before it.
				a.Items = append(a.Items[:i:i], append(add, a.Items[i:]...)...)
				return
			}
		}
		a.Items = append(a.Items, add...)
		a.Items = append(a.Items, state.ActivityItem{ToolUseID: in.ToolUseID, Tool: toolLine(in), Name: in.ToolName, State: state.ToolRunning, Start: now})
	})
}

// liveToolEnded marks a tool call done or failed (PostToolUse,
// PostToolUseFailure).
func (h *handler) liveToolEnded(ctx context.Context, in *claudehook.Input, sess state.Session) error {
	if sess.Progress != progressLive || in.ToolUseID == "" {
		return nil
	}
	now := time.Now().UTC()
	return h.updateActivity(ctx, in, sess, func(a *state.Activity) {
		it := a.Tool(in.ToolUseID)
		if it == nil {
			// PreToolUse is async and may come after: record the call now.
			a.Items = append(a.Items, state.ActivityItem{ToolUseID: in.ToolUseID, Tool: toolLine(in), Name: in.ToolName, Start: now})
			it = &a.Items[len(a.Items)-1]
			if in.DurationMS > 0 {
				it.Start = now.Add(-time.Duration(in.DurationMS) * time.Millisecond)
			}
		}
		it.State, it.End = state.ToolDone, now
		if in.HookEventName == claudehook.EventPostToolUseFailure {
			it.State = state.ToolFailed
		}
	})
}

// liveWaiting marks the call a permission prompt is about as waiting on a
// person (PermissionRequest carries no tool_use_id: the newest running
// call of that tool).
func (h *handler) liveWaiting(ctx context.Context, in *claudehook.Input, sess state.Session) error {
	if sess.Progress != progressLive {
		return nil
	}
	return h.updateActivity(ctx, in, sess, func(a *state.Activity) {
		for i := len(a.Items) - 1; i >= 0; i-- {
			if it := &a.Items[i]; it.Name == in.ToolName && it.State == state.ToolRunning {
				it.State = state.ToolWaiting
				return
			}
		}
	})
}

// liveTurnEnded closes the turn's activity once its reply is posted: the
// daemon turns the message into a one-line summary.
func (h *handler) liveTurnEnded(ctx context.Context, in *claudehook.Input, sess state.Session) error {
	if sess.Progress != progressLive || in.SessionID == "" || in.PromptID == "" {
		return nil
	}
	acts, err := h.activities()
	if err != nil {
		return err
	}
	_, err = acts.Update(ctx, state.TurnKey(in.SessionID, in.PromptID), func(a *state.Activity) error {
		if a.Started.IsZero() {
			return errNoActivity // a turn without tools leaves no activity message
		}
		now := time.Now().UTC()
		for i := range a.Items {
			if a.Items[i].ToolUseID != "" && a.Items[i].End.IsZero() {
				a.Items[i].End = now
			}
		}
		a.Ended = now
		a.Version++
		return nil
	})
	if errors.Is(err, errNoActivity) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("end activity: %w", err)
	}
	return nil
}

var errNoActivity = errors.New("no activity")
