package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/ccbridge/ccbridge/internal/approval"
	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
)

// keysPoll is the fallback when a change event of the requests is missed.
const keysPoll = time.Second

// errPressed: another pass already took the decision to the pane.
var errPressed = errors.New("already pressed")

// pressAnswers takes the decisions of cards whose agent answers by keys
// (Codex's approval dialog: its hook does not wait) to their panes, each
// once, until ctx ends. Whatever decided them (a click, the MCP front
// end) went through the owners' guard and the card's binding first.
func (r *relay) pressAnswers(ctx context.Context) {
	events, _ := r.store.Requests.Watch(ctx)
	tick := time.NewTicker(keysPoll)
	defer tick.Stop()
	for {
		all, _ := r.store.Requests.List()
		for id, req := range all {
			if req.Keys == "" || req.Status != state.RequestDecided || req.Pressed {
				continue
			}
			req, err := r.store.Requests.Update(ctx, id, func(q *state.Request) error {
				if q.Pressed {
					return errPressed
				}
				q.Pressed = true
				return nil
			})
			if err != nil {
				continue
			}
			go r.pressAnswer(ctx, id, req)
		}
		select {
		case <-ctx.Done():
			return
		case <-events:
		case <-tick.C:
		}
	}
}

// pressAnswer presses one decision and says on the card what came of it:
// the prefix Codex will not ask about again, or that the dialog had gone
// (answered in the terminal first), or why nothing was pressed.
func (r *relay) pressAnswer(ctx context.Context, id string, req state.Request) {
	var d claudehook.Decision
	_ = json.Unmarshal(req.Decision, &d)
	instructions := ""
	if d.Message != approval.DenyMessage {
		instructions = d.Message
	}
	always, err := r.sessions.PressAnswer(ctx, req, instructions)
	if err == nil && always == "" {
		return // the card already says it
	}
	r.log.Info("a card's answer in the agent's dialog", "request", id, "always", always, "err", err)
	req, uerr := r.store.Requests.Update(ctx, id, func(q *state.Request) error {
		switch {
		case err == nil:
			q.Outcome = approval.KeysAlwaysScope(q.Outcome, always)
		case errors.Is(err, session.ErrDialogGone):
			q.Status = state.RequestTerminal
		default:
			q.Outcome += "\n⚠️ It could not be pressed into the terminal's dialog (" + err.Error() + "): answer there or with /screen."
		}
		return nil
	})
	if uerr != nil {
		return
	}
	r.editCard(ctx, id, req)
}
