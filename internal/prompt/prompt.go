// Package prompt is the front-end-agnostic side of a pending request
// (a permission prompt, an AskUserQuestion, a plan approval): the request
// as data, its questions and the answers each accepts, and Decide, the one
// locked step that turns an answer into the decision the waiting hook
// returns to Claude Code. Both front ends call Decide: the Discord router
// with a card's click, the MCP server with answers by option label. The
// first answer wins, whoever gives it; the others find the request closed.
// It imports approval (whose Apply builds the decisions), claudehook and
// state, and nothing of Discord's transport or MCP.
package prompt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ccbridge/ccbridge/internal/approval"
	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/state"
)

// Errors Decide and Answer return.
var (
	// ErrStale: the request is no longer pending (answered elsewhere,
	// expired, interrupted).
	ErrStale = errors.New("request no longer pending")
	// ErrNoChange: the action changed nothing (a notice explains why).
	ErrNoChange = errors.New("nothing to change")
)

// Decide applies fn to the request while it is pending, inside one locked
// update of its record: of two answers racing, one applies and the other
// gets ErrStale. A result with a notice changes nothing (ErrNoChange).
func Decide(ctx context.Context, reqs *state.Collection[state.Request], id string, fn func(*state.Request) (approval.Result, error)) (state.Request, approval.Result, error) {
	var result approval.Result
	updated, err := reqs.Update(ctx, id, func(cur *state.Request) error {
		if cur.Status != state.RequestPending {
			return ErrStale
		}
		res, err := fn(cur)
		if err != nil {
			return err
		}
		result = res
		if res.Notice != "" {
			return ErrNoChange
		}
		return nil
	})
	return updated, result, err
}

// Tools with prompts of their own.
const (
	toolAsk  = "AskUserQuestion"
	toolPlan = "ExitPlanMode"
)

// Kinds of pending request.
const (
	KindTool     = "tool_approval"
	KindPlan     = "plan_approval"
	KindQuestion = "question"
)

// Answers to a tool approval and a plan approval. A "deny: <text>" or
// "reject: <text>" answer carries instructions or feedback.
const (
	Allow         = "allow"
	Deny          = "deny"
	Approve       = "approve"
	ApproveManual = "approve-manual"
	Reject        = "reject"
)

// RejectMessage is the feedback of a plain "reject".
const RejectMessage = "The user did not approve this plan. Keep planning."

// Question is one question of a pending request, with its options.
type Question struct {
	Question    string   `json:"question"`
	Header      string   `json:"header,omitempty"`
	Options     []string `json:"options"`
	MultiSelect bool     `json:"multiSelect,omitempty"`
	// FreeText says an answer outside the options is taken (Other, or
	// the text after "deny: ").
	FreeText bool `json:"freeText,omitempty"`
}

// Pending is a pending request as data.
type Pending struct {
	ID        string     `json:"id"`
	Type      string     `json:"type"`
	ToolName  string     `json:"toolName,omitempty"`
	ToolInput any        `json:"toolInput,omitempty"`
	Questions []Question `json:"questions"`
}

// Describe turns a request into its questions and options.
func Describe(id string, req state.Request) Pending {
	p := Pending{ID: id, ToolName: req.ToolName}
	var input any
	if json.Unmarshal(req.ToolInput, &input) == nil {
		p.ToolInput = input
	}
	switch req.ToolName {
	case toolAsk:
		p.Type = KindQuestion
		var in claudehook.AskInput
		_ = json.Unmarshal(req.ToolInput, &in)
		for _, q := range in.Questions {
			pq := Question{Question: q.Question, Header: q.Header, MultiSelect: q.MultiSelect, FreeText: true}
			for _, o := range q.Options {
				pq.Options = append(pq.Options, o.Label)
			}
			p.Questions = append(p.Questions, pq)
		}
	case toolPlan:
		p.Type = KindPlan
		var in claudehook.PlanInput
		_ = json.Unmarshal(req.ToolInput, &in)
		options := []string{Approve, ApproveManual, Reject}
		if req.Keys != "" {
			options = []string{Approve, Reject} // its dialog's one Yes
		}
		p.Questions = []Question{{Question: "Approve this plan?\n\n" + in.Plan, Header: "Plan", Options: options, FreeText: true}}
	default:
		p.Type = KindTool
		p.Questions = []Question{{Question: toolQuestion(req), Header: req.ToolName, Options: []string{Allow, Deny}, FreeText: true}}
	}
	return p
}

// toolQuestion says what Claude wants to do.
func toolQuestion(req state.Request) string {
	who := "Claude"
	if req.AgentType != "" {
		who = "Claude's " + req.AgentType + " agent"
	}
	switch req.ToolName {
	case "Bash":
		var in claudehook.BashInput
		_ = json.Unmarshal(req.ToolInput, &in)
		s := fmt.Sprintf("%s wants to run: %s", who, in.Command)
		if in.Description != "" {
			s += "\n(" + in.Description + ")"
		}
		return s
	case "Write":
		var in claudehook.WriteInput
		_ = json.Unmarshal(req.ToolInput, &in)
		return fmt.Sprintf("%s wants to create %s", who, in.FilePath)
	case "Edit":
		var in claudehook.EditInput
		_ = json.Unmarshal(req.ToolInput, &in)
		return fmt.Sprintf("%s wants to edit %s", who, in.FilePath)
	}
	return fmt.Sprintf("%s wants to use %s: %s", who, req.ToolName, string(req.ToolInput))
}

// AnswerError says an answer does not fit the request.
type AnswerError struct{ Msg string }

func (e *AnswerError) Error() string { return e.Msg }

func badAnswer(format string, a ...any) error { return &AnswerError{Msg: fmt.Sprintf(format, a...)} }

// Actions translates answers by label into the card actions a person
// would take in Discord, so an answer from any front end is applied by
// approval.Apply and builds the very decision a click builds.
func Actions(req state.Request, answers []string, who string) ([]approval.Action, error) {
	switch req.ToolName {
	case toolAsk:
		return questionActions(req, answers, who)
	}
	if len(answers) != 1 {
		return nil, badAnswer("this prompt takes exactly one answer, got %d", len(answers))
	}
	a := strings.TrimSpace(answers[0])
	word, text, hasText := strings.Cut(a, ":")
	word, text = strings.ToLower(strings.TrimSpace(word)), strings.TrimSpace(text)
	if req.ToolName == toolPlan {
		switch {
		case word == Approve && !hasText && req.Keys != "":
			// A plan answered with its dialog's keys (Codex's) has one Yes.
			return []approval.Action{{Name: "plandefault", User: who}}, nil
		case word == Approve && !hasText:
			return []approval.Action{{Name: "planaccept", User: who}}, nil
		case word == ApproveManual && !hasText:
			return []approval.Action{{Name: "plandefault", User: who}}, nil
		case word == Reject && hasText && text != "":
			return []approval.Action{{Name: "plantext", Fields: map[string]string{"text": text}, User: who}}, nil
		case word == Reject && !hasText:
			return []approval.Action{{Name: "plantext", Fields: map[string]string{"text": RejectMessage}, User: who}}, nil
		}
		return nil, badAnswer("answer %q is not among the options: approve, approve-manual, reject, reject: <feedback>", a)
	}
	switch {
	case word == Allow && !hasText:
		return []approval.Action{{Name: "allow", User: who}}, nil
	case word == Deny && !hasText:
		return []approval.Action{{Name: "deny", User: who}}, nil
	case word == Deny && hasText && text != "":
		return []approval.Action{{Name: "denytext", Fields: map[string]string{"text": text}, User: who}}, nil
	}
	return nil, badAnswer("answer %q is not among the options: allow, deny, deny: <instructions>", a)
}

// questionActions answers each question in turn: an option's label (for
// multiSelect, several comma-joined), else free text (Other); for
// multiSelect, labels and free text may be mixed.
func questionActions(req state.Request, answers []string, who string) ([]approval.Action, error) {
	var in claudehook.AskInput
	if err := json.Unmarshal(req.ToolInput, &in); err != nil {
		return nil, fmt.Errorf("question input: %w", err)
	}
	if len(answers) != len(in.Questions) {
		return nil, badAnswer("this prompt has %d question(s); give one answer for each, in order (got %d)", len(in.Questions), len(answers))
	}
	var out []approval.Action
	for qi, q := range in.Questions {
		a := strings.TrimSpace(answers[qi])
		if a == "" {
			return nil, badAnswer("the answer to %q is empty", q.Question)
		}
		label := func(s string) int {
			return slices.IndexFunc(q.Options, func(o claudehook.QuestionOption) bool { return strings.EqualFold(o.Label, strings.TrimSpace(s)) })
		}
		qs := strconv.Itoa(qi)
		if oi := label(a); oi >= 0 {
			out = append(out, approval.Action{Name: "qb", Args: []string{qs, strconv.Itoa(oi)}, User: who})
			continue
		}
		if q.MultiSelect {
			var values, labels, other []string
			for _, part := range strings.Split(a, ",") {
				if oi := label(part); oi >= 0 {
					values, labels = append(values, strconv.Itoa(oi)), append(labels, q.Options[oi].Label)
				} else if p := strings.TrimSpace(part); p != "" {
					other = append(other, p)
				}
			}
			if len(other) == 0 {
				out = append(out, approval.Action{Name: "qs", Args: []string{qs}, Values: values, User: who})
				continue
			}
			// Labels with Other: the free text joins the chosen labels, as
			// a card's "Other…" with options selected does.
			a = strings.Join(append(labels, other...), ", ")
		}
		out = append(out, approval.Action{Name: "qtext", Args: []string{qs}, Fields: map[string]string{"text": a}, User: who})
	}
	return out, nil
}

// Answer decides a pending request from answers by label, through Decide:
// the same decision a Discord click builds, recorded as decided via the
// given front end (so the waiting hook updates the request's card).
func Answer(ctx context.Context, reqs *state.Collection[state.Request], id string, answers []string, who, via string) (state.Request, error) {
	updated, res, err := Decide(ctx, reqs, id, func(cur *state.Request) (approval.Result, error) {
		actions, err := Actions(*cur, answers, who)
		if err != nil {
			return approval.Result{}, err
		}
		// These answers are the whole answer: drop any half-made on a card.
		cur.Answers, cur.Step = nil, ""
		for _, a := range actions {
			// Describe shows the request unredacted, so the answer
			// is to what would run, even where a card is masked.
			a.Unmasked = true
			res, err := approval.Apply(id, cur, a)
			if err != nil {
				return approval.Result{}, fmt.Errorf("apply %s: %w", a.Name, err)
			}
			if res.Notice != "" {
				return res, nil
			}
		}
		if cur.Status != state.RequestDecided {
			return approval.Result{}, badAnswer("the answers did not decide the prompt")
		}
		cur.Via = via
		return approval.Result{}, nil
	})
	if errors.Is(err, ErrNoChange) {
		return updated, badAnswer("%s", res.Notice)
	}
	return updated, err
}

// Outcome says how a closed request ended, for a front end's reply.
func Outcome(req state.Request) string {
	switch req.Status {
	case state.RequestDecided:
		return "already answered: " + req.Outcome
	case state.RequestTerminal:
		return "already answered in the terminal"
	case state.RequestExpired:
		return "expired"
	case state.RequestInterrupted:
		return "dismissed in the terminal (or the turn stopped)"
	case state.RequestFailed:
		return "failed"
	}
	return req.Status
}
