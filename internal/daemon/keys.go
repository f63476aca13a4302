package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/ccbridge/ccbridge/internal/approval"
	"github.com/ccbridge/ccbridge/internal/audit"
	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
)

// keysPoll is the fallback when a change event of the requests is missed.
const keysPoll = time.Second

// errPressed: another pass already took the decision to the pane.
var errPressed = errors.New("already pressed")

// pressTimeout bounds one press, which outlives the process's context: a
// decision claimed must come to an outcome on its card.
const pressTimeout = 2 * time.Minute

// presser takes the decisions of cards whose agent answers by keys
// (Codex's dialogs: its hooks do not wait) to their panes. The daemon runs
// it, and so does `ccbridge mcp`, whose sessions may run with no daemon;
// each decision is pressed once, by whichever claims it first. posters
// (the daemon's; none in mcp) redraw a card whose pressing came to
// something the card must say.
type presser struct {
	store *state.Store
	// press is the session manager's PressAnswer.
	press   func(ctx context.Context, req state.Request, instructions string) (always string, err error)
	posters map[string]chat.Poster
	log     *slog.Logger

	mu     sync.Mutex
	busy   map[string]bool // sessions a drain is pressing
	drains sync.WaitGroup
}

// pressAnswers is the presser of the daemon's relay.
func (r *relay) pressAnswers(ctx context.Context) {
	(&presser{store: r.store, press: r.sessions.PressAnswer, posters: r.posters, log: r.log}).run(ctx)
}

// run presses each decided request once, until ctx ends: one drain per
// session, which presses its requests oldest first (the order Codex shows
// their dialogs in). Whatever decided them (a click, the MCP front end)
// went through the owners' guard and the card's binding first.
func (r *presser) run(ctx context.Context) {
	events, _ := r.store.Requests.Watch(ctx)
	tick := time.NewTicker(keysPoll)
	defer tick.Stop()
	for {
		all, _ := r.store.Requests.List()
		for _, req := range all {
			if req.Keys == "" || req.Status != state.RequestDecided || req.Pressed {
				continue
			}
			r.mu.Lock()
			if r.busy == nil {
				r.busy = map[string]bool{}
			}
			if !r.busy[req.Session] {
				r.busy[req.Session] = true
				r.drains.Add(1)
				go r.drain(ctx, req.Session)
			}
			r.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-events:
		case <-tick.C:
		}
	}
}

// wait returns once the drains run started have ended; call it after run
// returned.
func (r *presser) wait() { r.drains.Wait() }

// drain presses a session's decided requests one at a time, oldest first,
// until none is left or ctx ends.
func (r *presser) drain(ctx context.Context, sess string) {
	defer func() {
		r.mu.Lock()
		delete(r.busy, sess)
		r.mu.Unlock()
		r.drains.Done()
	}()
	for ctx.Err() == nil {
		all, _ := r.store.Requests.List()
		id, shadowed, ok := nextToPress(all, sess)
		if !ok {
			return
		}
		req, err := r.store.Requests.Update(ctx, id, func(q *state.Request) error {
			if q.Pressed || q.Status != state.RequestDecided {
				return errPressed
			}
			q.Pressed = true
			return nil
		})
		if err != nil {
			if errors.Is(err, errPressed) {
				continue
			}
			return
		}
		if shadowed {
			r.note(ctx, id, "\n⚠️ Not pressed: a newer card asks Codex about the same command, and the dialog on the screen is the newer one's: answer that card, in the terminal or with /screen.")
			continue
		}
		r.pressAnswer(ctx, id, req)
	}
}

// nextToPress is the oldest decided keyed request of sess not yet pressed;
// shadowed says a NEWER pending keyed request of the session asks the same
// (the model ran the command again, or asked twice in parallel), so the
// dialog on the screen may be the newer one's.
func nextToPress(all map[string]state.Request, sess string) (id string, shadowed, ok bool) {
	var next state.Request
	for k, q := range all {
		if q.Session != sess || q.Keys == "" || q.Status != state.RequestDecided || q.Pressed {
			continue
		}
		if !ok || q.Created.Before(next.Created) || (q.Created.Equal(next.Created) && k < id) {
			id, next, ok = k, q, true
		}
	}
	if !ok {
		return "", false, false
	}
	for _, q := range all {
		if q.Session == sess && q.Keys != "" && q.Status == state.RequestPending && q.Created.After(next.Created) && sameAsk(q, next) {
			return id, true, true
		}
	}
	return id, false, true
}

// sameAsk reports whether two keyed requests ask Codex the same: the same
// command, question or plan (the model's description aside).
func sameAsk(a, b state.Request) bool {
	if a.ToolName != b.ToolName {
		return false
	}
	var x, y map[string]any
	if json.Unmarshal(a.ToolInput, &x) != nil || json.Unmarshal(b.ToolInput, &y) != nil {
		return false
	}
	delete(x, "description")
	delete(y, "description")
	return reflect.DeepEqual(x, y)
}

// pressAnswer presses one decision and says on the card what came of it:
// the prefix Codex will not ask about again, or that the dialog had gone
// (answered in the terminal first), or why nothing was pressed. The press
// and its record outlive ctx (the process's): a claimed decision that
// never reached its card would say Allowed while Codex waits.
func (r *presser) pressAnswer(ctx context.Context, id string, req state.Request) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pressTimeout)
	defer cancel()
	var d claudehook.Decision
	_ = json.Unmarshal(req.Decision, &d)
	instructions := ""
	if d.Message != approval.DenyMessage {
		instructions = d.Message
	}
	always, err := r.press(ctx, req, instructions)
	r.auditAnswer(req, always, err)
	if err == nil && always == "" {
		return // the card already says it
	}
	r.log.Info("a card's answer in the agent's dialog", "request", id, "always", always, "err", err)
	r.update(ctx, id, func(q *state.Request) {
		switch {
		case err == nil:
			q.Outcome = approval.KeysAlwaysScope(q.Outcome, always)
		case errors.Is(err, session.ErrDialogGone):
			q.Status = state.RequestTerminal
		case errors.Is(err, session.ErrBroadAlways):
			q.Outcome += "\n⚠️ Not pressed: " + err.Error() + "."
		case errors.Is(err, session.ErrDialogUnseen):
			q.Outcome += "\n⚠️ Not pressed: could not see Codex's dialog: answer it in the terminal or with /screen."
		default:
			q.Outcome += "\n⚠️ It could not be pressed into the terminal's dialog (" + err.Error() + "): answer there or with /screen."
		}
	})
}

// note adds a line to a request's outcome and redraws its card.
func (r *presser) note(ctx context.Context, id, line string) {
	r.update(ctx, id, func(q *state.Request) { q.Outcome += line })
}

// update changes a request and redraws its card.
func (r *presser) update(ctx context.Context, id string, fn func(*state.Request)) {
	req, err := r.store.Requests.Update(ctx, id, func(q *state.Request) error { fn(q); return nil })
	if err != nil {
		r.log.Error("could not record a card's press", "request", id, "err", err)
		return
	}
	if p, ok := r.posters[req.Server]; ok && req.MessageID != "" {
		ectx, cancel := context.WithTimeout(ctx, noticeTimeout)
		defer cancel()
		if err := p.EditCard(ectx, req.ChannelID, req.MessageID, approval.Render(id, req), approval.StatusLine(req)); err != nil {
			r.log.Error("could not update a card", "request", id, "err", err)
		}
	}
}

// auditAnswer logs a keyed card's answer as the hook logs one it waited
// for (hook/audit.go): its hook is gone, so the daemon that pressed it
// does. Who answered is the first user the outcome mentions; an answer
// that could not be pressed says so.
func (r *presser) auditAnswer(req state.Request, always string, pressErr error) {
	var d claudehook.Decision
	_ = json.Unmarshal(req.Decision, &d)
	var in struct {
		Command   string `json:"command"`
		Plan      string `json:"plan"`
		Questions []struct {
			Question string `json:"question"`
		} `json:"questions"`
	}
	_ = json.Unmarshal(req.ToolInput, &in)
	e := audit.Entry{Kind: "permission", Server: req.Server, Session: req.Session, Channel: req.ChannelID, Tool: req.ToolName,
		Asked: req.ToolName + ": " + in.Command, Answer: d.Behavior, From: audit.FromDiscord, Who: mentionedUser(req.Outcome), Detail: req.Outcome}
	switch {
	case len(in.Questions) > 0:
		e.Kind, e.Asked = "question", req.ToolName+": "+in.Questions[0].Question
	case in.Plan != "":
		e.Kind, e.Asked = "plan", req.ToolName+": "+in.Plan
	}
	if sess, err := r.store.Sessions.Get(req.Session); err == nil {
		e.Project = sess.Project
	}
	if routes, err := r.store.Routes.Get(state.RoutesKey); err == nil && audit.Chat(routes.Platforms[req.Server]) {
		e.From = routes.Platforms[req.Server]
	}
	if req.Via != "" {
		e.From, e.Who = req.Via, req.Via+" client"
	}
	switch {
	case pressErr != nil:
		e.Detail += " (not pressed into Codex's dialog: " + pressErr.Error() + ")"
	case always != "":
		e.Detail = approval.KeysAlwaysScope(req.Outcome, always)
	}
	dir, err := state.DurableDir()
	if err == nil {
		err = audit.Append(dir, e)
	}
	if err != nil {
		r.log.Error("audit", "err", err)
	}
}

// mentionedUser is the user id of the first <@id> in s.
func mentionedUser(s string) string {
	_, rest, ok := strings.Cut(s, "<@")
	if !ok {
		return ""
	}
	id, _, ok := strings.Cut(strings.TrimPrefix(rest, "!"), ">")
	if !ok || id == "" || strings.Trim(id, "0123456789") != "" {
		return ""
	}
	return id
}
