package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
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

// presser takes the decisions of cards whose agent answers by keys
// (Codex's dialogs: its hooks do not wait) to their panes. The daemon runs
// it, and so does `ccbridge mcp`, whose sessions may run with no daemon;
// each decision is pressed once, by whichever claims it first. posters
// (the daemon's; none in mcp) redraw a card whose pressing came to
// something the card must say.
type presser struct {
	store    *state.Store
	sessions *session.Manager
	posters  map[string]chat.Poster
	log      *slog.Logger
}

// pressAnswers is the presser of the daemon's relay.
func (r *relay) pressAnswers(ctx context.Context) {
	(&presser{store: r.store, sessions: r.sessions, posters: r.posters, log: r.log}).run(ctx)
}

// run presses each decided request once, until ctx ends. Whatever decided
// them (a click, the MCP front end) went through the owners' guard and the
// card's binding first.
func (r *presser) run(ctx context.Context) {
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
func (r *presser) pressAnswer(ctx context.Context, id string, req state.Request) {
	var d claudehook.Decision
	_ = json.Unmarshal(req.Decision, &d)
	instructions := ""
	if d.Message != approval.DenyMessage {
		instructions = d.Message
	}
	always, err := r.sessions.PressAnswer(ctx, req, instructions)
	r.auditAnswer(req, always, err)
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
