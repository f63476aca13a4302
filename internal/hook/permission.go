package hook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"time"

	"github.com/ccbridge/ccbridge/internal/approval"
	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/state"
)

// Waiting for an answer: events from the runtime dir wake the hook at once;
// the poll is the fallback when a change event is missed.
const (
	waitPoll           = 500 * time.Millisecond
	cardTimeout        = 10 * time.Second
	closeCardTimeout   = 5 * time.Second
	defaultPromptLimit = 30 * time.Minute
)

var errNotPending = errors.New("request no longer pending")

// permission posts a card for a PermissionRequest and waits for the answer
// from Discord. It prints a decision only when a person decided; on
// timeout, error or interruption it prints nothing, so the terminal dialog
// (which stays open all along) decides, and nothing is allowed by default.
func (h *handler) permission(ctx context.Context, in *claudehook.Input, sess state.Session) error {
	server, channel := sess.Server, sess.Channel()
	if server == "" {
		// A session of another front end (ccbridge mcp): it waits for an
		// answer from there, with a card too when a project holds its cwd.
		if r, ok := h.routeFor(in.Cwd); ok {
			server, channel = r.Server, r.ChannelID
		}
	}
	var bot state.Bot
	if server != "" {
		b, err := h.store.Bots.Get(server)
		switch {
		case err == nil:
			bot = b
		case sess.Server != "":
			return fmt.Errorf("no credentials for server %s (is the daemon running?): %w", sess.Server, err)
		default:
			server, channel = "", "" // no daemon: no card
		}
	}
	// Claude gives up on the hook after the timeout its settings name: the
	// session's when ccbridge started it, else the daemon's.
	limit := sess.PromptTimeout
	if limit <= 0 {
		limit = bot.PromptTimeout
	}
	if limit <= 0 {
		limit = defaultPromptLimit
	}
	id, err := state.NewRequestID()
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	req := state.Request{Session: h.session, Server: server, ChannelID: channel, Instance: bot.Instance,
		ClaudeSessionID: in.SessionID, PromptID: in.PromptID, ToolName: in.ToolName, ToolInput: in.ToolInput,
		AgentType: in.AgentType, HookPID: os.Getpid(), Created: now, Deadline: now.Add(limit), Status: state.RequestPending}
	if len(in.PermissionSuggestions) > 0 {
		req.Suggestions, _ = json.Marshal(in.PermissionSuggestions)
	}
	req.PolicyRule = h.askRule(in, sess) // policy.go
	byKeys(in, &req)                     // codexkeys.go
	if _, err := h.store.Requests.Create(ctx, id, req); err != nil {
		return fmt.Errorf("record request: %w", err)
	}
	log := h.log.With("request", id, "tool", in.ToolName)
	var poster chat.Poster
	if server != "" {
		poster = h.botPoster(server, bot)
		pctx, cancel := context.WithTimeout(ctx, cardTimeout)
		card := approval.Render(id, req)
		msgID, files, err := poster.PostCard(pctx, req.ChannelID, card)
		cancel()
		if err != nil {
			if sess.Server != "" {
				h.close(id, state.RequestFailed, poster)
				return fmt.Errorf("post card: %w", err)
			}
			// Another front end still waits for the answer.
			log.Error("could not post the card", "err", err)
			poster = nil
		} else {
			// A click approves only on this message while it shows this.
			bind := func(r *state.Request) error {
				r.MessageID, r.CardFiles, r.CardHash = msgID, files, state.CardHash(chat.Face(card.Content, card.Rows), files)
				return nil
			}
			if _, err := h.store.Requests.Update(ctx, id, bind); err != nil {
				return err
			}
			log.Info("card posted; waiting", "message", msgID, "deadline", req.Deadline)
		}
	}
	if req.Keys != "" {
		log.Info("the agent's dialog takes the answer, by keys from the card or the terminal")
		return nil
	}

	decided, err := h.waitDecision(ctx, id, req.Deadline)
	switch {
	case err != nil:
		return err
	case decided == nil:
		return nil
	}
	d, err := approval.Decode(*decided)
	if err != nil {
		return err
	}
	d = decisionFor(in, d, h.log) // codex.go
	log.Info("decision", "behavior", d.Behavior, "via", decided.Via)
	// The decision first: the audit record, which may wait seconds for
	// its lock, must never delay or lose it.
	err = json.NewEncoder(h.out).Encode(claudehook.NewPermissionRequestOutput(d))
	h.auditRequest(*decided)
	if err != nil {
		return err
	}
	if decided.Via != "" {
		// Decided elsewhere than on the card: the card says so now.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeCardTimeout)
		defer cancel()
		h.editCard(cctx, id, *decided, poster)
	}
	return nil
}

// routeFor finds the project whose directory holds cwd, if any.
func (h *handler) routeFor(cwd string) (state.Route, bool) {
	routes, err := h.store.Routes.Get(state.RoutesKey)
	if err != nil || cwd == "" {
		return state.Route{}, false
	}
	return routes.Match(filepath.Clean(cwd))
}

// waitDecision returns the request once decided, or nil when it closed
// otherwise (answered in the terminal, expired, interrupted).
func (h *handler) waitDecision(ctx context.Context, id string, deadline time.Time) (*state.Request, error) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, err := h.store.Requests.Watch(wctx)
	if err != nil {
		events = nil
	}
	tick := time.NewTicker(waitPoll)
	defer tick.Stop()
	expire := time.NewTimer(time.Until(deadline))
	defer expire.Stop()
	for {
		r, err := h.store.Requests.Get(id)
		if err != nil {
			return nil, err
		}
		switch r.Status {
		case state.RequestDecided:
			return &r, nil
		case state.RequestPending:
		default:
			return nil, nil
		}
		select {
		case <-ctx.Done():
			// Claude stopped waiting: the person answered No or Esc in the
			// terminal (which kills the hook), or Claude's own timeout.
			h.close(id, state.RequestInterrupted, nil)
			return nil, nil
		case <-expire.C:
			h.close(id, state.RequestExpired, nil)
			return nil, nil
		case <-events:
		case <-tick.C:
		}
	}
}

// close moves a pending request to a final status and updates its card. It
// runs on a fresh context: it is called when the hook's own is ending.
func (h *handler) close(id, status string, poster chat.Poster) {
	ctx, cancel := context.WithTimeout(context.Background(), closeCardTimeout)
	defer cancel()
	r, err := h.store.Requests.Update(ctx, id, func(r *state.Request) error {
		if r.Status != state.RequestPending {
			return errNotPending
		}
		r.Status = status
		return nil
	})
	if err != nil {
		return
	}
	h.log.Info("request closed", "request", id, "status", status)
	h.auditRequest(r)
	h.editCard(ctx, id, r, poster)
}

func (h *handler) editCard(ctx context.Context, id string, r state.Request, poster chat.Poster) {
	if r.MessageID == "" {
		return
	}
	if poster == nil {
		var err error
		if poster, _, err = h.poster(r.Server); err != nil {
			h.log.Warn("could not update the card", "request", id, "err", err)
			return
		}
	}
	if err := poster.EditCard(ctx, r.ChannelID, r.MessageID, approval.Render(id, r), approval.StatusLine(r)); err != nil {
		h.log.Error("could not update the card", "request", id, "err", err)
	}
}

// retire closes the card of a prompt that was answered in the terminal:
// PostToolUse (or PostToolUseFailure) of its tool call arrived while it was
// still pending. PermissionRequest carries no tool_use_id (protocol notes
// §3.2), so the request is found by Claude session, tool name and exactly
// the same input: a PostToolUse of another call of the same tool (parallel,
// or a subagent's, allowed without a prompt) must leave the card alone.
// Of several identical pending calls the oldest is retired.
func (h *handler) retire(ctx context.Context, in *claudehook.Input) error {
	all, err := h.store.Requests.List()
	if err != nil && len(all) == 0 {
		return err
	}
	best := ""
	for id, r := range all {
		if r.Status != state.RequestPending || r.ClaudeSessionID != in.SessionID || r.ToolName != cardTool(in) {
			continue
		}
		if r.Keys != "" && !sameKeyedCall(r, in.ToolInput) || r.Keys == "" && !sameCall(in.ToolName, r.ToolInput, in.ToolInput) {
			continue
		}
		if best == "" || r.Created.Before(all[best].Created) {
			best = id
		}
	}
	if best == "" {
		return nil
	}
	r, err := h.store.Requests.Update(ctx, best, func(r *state.Request) error {
		if r.Status != state.RequestPending {
			return errNotPending
		}
		r.Status = state.RequestTerminal
		return nil
	})
	if errors.Is(err, errNotPending) {
		return nil
	}
	if err != nil {
		return err
	}
	h.log.Info("prompt answered in the terminal", "request", best)
	h.auditRequest(r)
	h.editCard(ctx, best, r, nil)
	return nil
}

// filledKeys are the keys of a tool's input that differ between the
// PermissionRequest and the PostToolUse of the same call (protocol notes
// §2.1, §2.3, §5): Claude Code fills ExitPlanMode's plan and planFilePath
// in before the hooks run, but PostToolUse shows the model's own input
// ({}); an AskUserQuestion answered in the terminal comes back with
// answers and annotations added. They are left out of the comparison.
var filledKeys = map[string][]string{
	"AskUserQuestion": {"answers", "annotations"},
	"ExitPlanMode":    {"plan", "planFilePath"},
}

// sameCall reports whether post (a PostToolUse tool_input) is the input of
// the call that asked (req): equal JSON, but for the keys in filledKeys.
func sameCall(tool string, req, post json.RawMessage) bool {
	var x, y map[string]any
	if json.Unmarshal(req, &x) != nil || json.Unmarshal(post, &y) != nil || x == nil || y == nil {
		return false
	}
	for _, k := range filledKeys[tool] {
		delete(x, k)
		delete(y, k)
	}
	return reflect.DeepEqual(x, y)
}
