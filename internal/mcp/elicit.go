package mcp

import (
	"context"
	"fmt"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ccbridge/ccbridge/internal/prompt"
	"github.com/ccbridge/ccbridge/internal/state"
)

// elicitPoll rechecks the requests when a change event is missed.
const elicitPoll = time.Second

// elicitLoop sends each new prompt of a session started (or resumed) by
// this server to the client as an elicitation, when the client supports
// them. The answer is a decision like any other; decline or cancel decides
// nothing, and the prompt stays open for claude_respond, the terminal or
// Discord.
func (s *Server) elicitLoop(ctx context.Context, ss *sdk.ServerSession) {
	if p := ss.InitializeParams(); p == nil || p.Capabilities == nil || p.Capabilities.Elicitation == nil {
		return
	}
	events, _ := s.opt.Store.Requests.Watch(ctx)
	tick := time.NewTicker(elicitPoll)
	defer tick.Stop()
	for {
		all, _ := s.opt.Store.Requests.List()
		for id, r := range all {
			if r.Status != state.RequestPending || !s.claim(id, r.Session) {
				continue
			}
			go s.elicit(ctx, ss, id, r)
		}
		select {
		case <-ctx.Done():
			return
		case <-events:
		case <-tick.C:
		}
	}
}

// claim marks a request as sent, once, if its session is ours.
func (s *Server) claim(id, key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started[key] || s.elicited[id] {
		return false
	}
	s.elicited[id] = true
	return true
}

func (s *Server) elicit(ctx context.Context, ss *sdk.ServerSession, id string, r state.Request) {
	p := prompt.Describe(id, r)
	schema, message := form(p)
	// Answered elsewhere first (terminal, Discord, claude_respond): the
	// form is withdrawn, so the client is told it lost.
	ectx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		s.waitClosed(ectx, id)
		cancel()
	}()
	res, err := ss.Elicit(ectx, &sdk.ElicitParams{Mode: "form", Message: message, RequestedSchema: schema})
	if err != nil {
		if ectx.Err() != nil && ctx.Err() == nil {
			s.opt.Log.Info("prompt closed elsewhere; elicitation withdrawn", "request", id)
			return
		}
		s.opt.Log.Warn("elicitation failed", "request", id, "err", err)
		return
	}
	if res.Action != "accept" {
		s.opt.Log.Info("elicitation not accepted; nothing decided", "request", id, "action", res.Action)
		return
	}
	answers := formAnswers(p, res.Content)
	if _, err := prompt.Answer(ctx, s.opt.Store.Requests, id, answers, Who, Via); err != nil {
		s.opt.Log.Info("elicitation answer not applied", "request", id, "err", err)
		return
	}
	s.opt.Log.Info("prompt answered by elicitation", "request", id)
}

// Form field names.
const (
	fieldAnswer = "answer"
	fieldText   = "text"
)

func questionField(i int) string { return fmt.Sprintf("q%d", i+1) }
func otherField(i int) string    { return fmt.Sprintf("q%d_other", i+1) }

// form is the elicitation of a pending request: a field per question with
// its options, and free text where the answer takes it.
func form(p prompt.Pending) (map[string]any, string) {
	props := map[string]any{}
	var required []string
	var message string
	switch p.Type {
	case prompt.KindQuestion:
		message = "Claude asks:"
		for i, q := range p.Questions {
			message += "\n" + q.Question
			if q.MultiSelect {
				props[questionField(i)] = map[string]any{"type": "string", "title": q.Question,
					"description": "one or more of: " + strings.Join(q.Options, ", ") + " (comma-separated)"}
			} else {
				props[questionField(i)] = map[string]any{"type": "string", "title": q.Question, "enum": q.Options}
			}
			props[otherField(i)] = map[string]any{"type": "string", "title": "Other (your own answer to: " + q.Question + ")"}
		}
	case prompt.KindPlan:
		message = p.Questions[0].Question
		props[fieldAnswer] = map[string]any{"type": "string", "title": "Approve the plan?", "enum": p.Questions[0].Options}
		props[fieldText] = map[string]any{"type": "string", "title": "Feedback, to keep planning (with reject)"}
		required = []string{fieldAnswer}
	default:
		message = p.Questions[0].Question
		props[fieldAnswer] = map[string]any{"type": "string", "title": "Allow?", "enum": p.Questions[0].Options}
		props[fieldText] = map[string]any{"type": "string", "title": "Instructions for Claude (with deny)"}
		required = []string{fieldAnswer}
	}
	schema := map[string]any{"type": "object", "properties": props}
	if required != nil {
		schema["required"] = required
	}
	return schema, message
}

// formAnswers turns a submitted form into answers by label.
func formAnswers(p prompt.Pending, content map[string]any) []string {
	str := func(k string) string {
		v, _ := content[k].(string)
		return strings.TrimSpace(v)
	}
	switch p.Type {
	case prompt.KindQuestion:
		out := make([]string, len(p.Questions))
		for i := range p.Questions {
			a, other := str(questionField(i)), str(otherField(i))
			switch {
			case other != "" && a != "" && p.Questions[i].MultiSelect:
				out[i] = a + ", " + other
			case other != "":
				out[i] = other
			default:
				out[i] = a
			}
		}
		return out
	}
	a, text := str(fieldAnswer), str(fieldText)
	if text != "" && (a == prompt.Deny || a == prompt.Reject) {
		a += ": " + text
	}
	return []string{a}
}

// waitClosed returns once the request is no longer pending, or ctx ends.
func (s *Server) waitClosed(ctx context.Context, id string) {
	events, _ := s.opt.Store.Requests.Watch(ctx)
	tick := time.NewTicker(elicitPoll)
	defer tick.Stop()
	for {
		if r, err := s.opt.Store.Requests.Get(id); err != nil || r.Status != state.RequestPending {
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
