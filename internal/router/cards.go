package router

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ccbridge/ccbridge/internal/approval"
	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/guard"
	"github.com/ccbridge/ccbridge/internal/prompt"
	"github.com/ccbridge/ccbridge/internal/state"
)

// The locked decide step is prompt.Decide, shared with the MCP front end.
var (
	errStale    = prompt.ErrStale
	errNoChange = prompt.ErrNoChange
)

// errCardChanged: an approving click came from a message that is not the
// card as ccbridge drew it.
var errCardChanged = errors.New("the clicked message is not the card as drawn")

// cardChanged is the answer to such a click.
const cardChanged = "⚠️ This card was changed after ccbridge posted it (or it is a copy), so nothing was approved; answer in the terminal."

// clicked is the message an interaction came from, as Discord gave it.
type clicked struct {
	id, content string
	rows        []chat.Row
	files       []string
}

// unbound reports whether a card's action approves nothing (components.go,
// cardActions): it may come from any message showing the card's buttons.
// Every other action (allow, always, a plan's approval or edit, an answer
// to a question) counts only from the card itself, still showing what
// ccbridge drew: anyone holding the bot token (another machine of the
// fleet, a model that read it) can edit a card to show something
// harmless, or post a copy of its buttons.
func unbound(action string) bool {
	approves, known := cardActions[action]
	return known && !approves
}

// isCard reports whether m is the request's card showing what was drawn:
// the guard's one comparison, against the binding the request keeps.
func isCard(req *state.Request, m clicked) bool {
	return guard.Matches(req.MessageID, req.CardHash, guard.Shown{ID: m.id, Content: m.content, Rows: m.rows, FileIDs: m.files})
}

// answerCard applies a click or a modal to a prompt's card. The request is
// changed only while pending, inside one locked update, so of two clicks
// racing one decides and the other is told it came too late. The answer is
// an update of the card itself, well within Discord's 3 seconds.
func (r *Router) answerCard(server, reqID string, a approval.Action, m clicked, resp chat.Responder) {
	log := r.opt.Log.With("request", reqID, "action", a.Name)
	req, err := r.opt.Store.Requests.Get(reqID)
	if err != nil || req.Server != server {
		_ = resp.Respond(chat.Reply{Content: "This prompt is no longer pending: it was answered or has expired.", Ephemeral: true})
		return
	}
	if req.Status != state.RequestPending {
		_ = resp.Respond(chat.Reply{Content: closedNotice(req), Ephemeral: true})
		return
	}
	if req.MessageID == "" && !unbound(a.Name) {
		r.waitCardRecorded(reqID)
	}
	updated, result, err := prompt.Decide(r.ctx, r.opt.Store.Requests, reqID, func(cur *state.Request) (approval.Result, error) {
		if !unbound(a.Name) && !isCard(cur, m) {
			return approval.Result{}, errCardChanged
		}
		res, err := approval.Apply(reqID, cur, a)
		if err == nil && res.Modal == nil && res.Notice == "" && m.id == cur.MessageID {
			// The click redraws the card: what it shows from now on.
			card := approval.Render(reqID, *cur)
			cur.CardHash = state.CardHash(chat.Face(card.Content, card.Rows), cur.CardFiles)
		}
		return res, err
	})
	switch {
	case errors.Is(err, errCardChanged):
		log.Warn("refused a click on a message that is not the card as drawn", "message", m.id, "card", req.MessageID, "by", a.User)
		_ = resp.Respond(chat.Reply{Content: cardChanged, Ephemeral: true})
		return
	case errors.Is(err, errStale):
		cur, _ := r.opt.Store.Requests.Get(reqID)
		_ = resp.Respond(chat.Reply{Content: closedNotice(cur), Ephemeral: true})
		return
	case errors.Is(err, errNoChange):
		_ = resp.Respond(chat.Reply{Content: result.Notice, Ephemeral: true})
		return
	case errors.Is(err, approval.ErrUnknownAction):
		_ = resp.Respond(chat.Reply{Content: "This button is no longer valid.", Ephemeral: true})
		return
	case err != nil:
		log.Error("could not apply an answer", "err", err)
		_ = resp.Respond(chat.Reply{Content: "⚠️ " + chat.ErrText(err), Ephemeral: true})
		return
	}
	if result.Modal != nil {
		if err := resp.OpenModal(*result.Modal); err != nil {
			log.Error("could not open a modal", "err", err)
		}
		return
	}
	if updated.Status == state.RequestDecided {
		log.Info("prompt answered in chat", "by", a.User)
	}
	if _, err := resp.Update(approval.Render(reqID, updated)); err != nil {
		log.Error("could not update the card", "err", err)
	}
}

// cardRecordWait bounds the wait for the hook to record the card it just
// posted (it does so as soon as Discord answers the post), well within
// the 3 seconds an interaction may take to answer.
const cardRecordWait = 2 * time.Second

// waitCardRecorded waits until the request names its card's message, so a
// click that came quicker than the hook's record is judged, not refused.
func (r *Router) waitCardRecorded(reqID string) {
	ctx, cancel := context.WithTimeout(r.ctx, cardRecordWait)
	defer cancel()
	events, _ := r.opt.Store.Requests.Watch(ctx)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if req, err := r.opt.Store.Requests.Get(reqID); err != nil || req.MessageID != "" || req.Status != state.RequestPending {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-events:
		case <-tick.C:
		}
	}
}

func closedNotice(req state.Request) string {
	switch req.Status {
	case state.RequestDecided:
		return fmt.Sprintf("Already answered. %s", req.Outcome)
	case state.RequestTerminal:
		return "Already answered in the terminal."
	case state.RequestExpired:
		return "This prompt has expired; answer it in the terminal or with /screen."
	case state.RequestInterrupted:
		return "This prompt was dismissed in the terminal."
	}
	return "This prompt is no longer pending."
}

// ours decodes the custom_id of an interaction and checks who acted. It is
// false (and the interaction answered where needed) for another instance's
// component, which this daemon leaves alone, and for anyone but an owner.
func (r *Router) ours(customID, server string, u chat.User, resp chat.Responder) (chat.ID, bool) {
	id, err := chat.DecodeID(customID)
	if err != nil || id.Instance != r.opt.Instance {
		return id, false
	}
	if !r.allowed(server, u) {
		_ = resp.Respond(chat.Reply{Content: refusalForOthers, Ephemeral: true})
		return id, false
	}
	return id, true
}
