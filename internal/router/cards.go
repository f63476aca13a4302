package router

import (
	"errors"
	"fmt"

	"github.com/ccbridge/ccbridge/internal/approval"
	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/prompt"
	"github.com/ccbridge/ccbridge/internal/state"
)

// The locked decide step is prompt.Decide, shared with the MCP front end.
var (
	errStale    = prompt.ErrStale
	errNoChange = prompt.ErrNoChange
)

// answerCard applies a click or a modal to a prompt's card. The request is
// changed only while pending, inside one locked update, so of two clicks
// racing one decides and the other is told it came too late. The answer is
// an update of the card itself, well within Discord's 3 seconds.
func (r *Router) answerCard(server, reqID string, a approval.Action, resp chat.Responder) {
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
	updated, result, err := prompt.Decide(r.ctx, r.opt.Store.Requests, reqID, func(cur *state.Request) (approval.Result, error) {
		return approval.Apply(reqID, cur, a)
	})
	switch {
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
		_ = resp.Respond(chat.Reply{Content: "⚠️ " + errText(err), Ephemeral: true})
		return
	}
	if result.Modal != nil {
		if err := resp.OpenModal(*result.Modal); err != nil {
			log.Error("could not open a modal", "err", err)
		}
		return
	}
	if updated.Status == state.RequestDecided {
		log.Info("prompt answered from Discord", "by", a.User)
	}
	if err := resp.Update(approval.Render(reqID, updated)); err != nil {
		log.Error("could not update the card", "err", err)
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

// HandleModal handles a submitted form of one of this instance's cards.
func (r *Router) HandleModal(ev chat.ModalEvent, resp chat.Responder) {
	resp = fitting{resp} // limits.go
	id, ok := r.ours(ev.CustomID, ev.Server, ev.User, resp)
	if !ok {
		return
	}
	if id.Kind == landKind && len(id.Args) == 2 {
		r.landModal(ev, id.Args[0], id.Args[1], resp) // land.go
		return
	}
	if id.Kind == voiceKind && len(id.Args) == 2 && id.Args[0] == voiceSubmit {
		r.voiceModal(ev, id.Args[1], resp) // voice.go
		return
	}
	if id.Kind != approval.IDKind || len(id.Args) < 2 {
		_ = resp.Respond(chat.Reply{Content: "This form is no longer valid.", Ephemeral: true})
		return
	}
	r.answerCard(ev.Server, id.Args[0], approval.Action{Name: id.Args[1], Args: id.Args[2:], Fields: ev.Values, User: mention(ev.User)}, resp)
}

func mention(u chat.User) string { return "<@" + u.ID + ">" }

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
