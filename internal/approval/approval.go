// Package approval is the logic of the cards that let a person answer
// Claude Code from Discord: permission prompts (allow, always…, deny, deny
// with instructions), AskUserQuestion (options, multi-select, free text),
// and plan approval. It renders a request as a chat message, applies a
// click or a modal to it, and builds the decision Claude Code expects. It
// is pure: the hook posts the card and waits, the router applies clicks,
// both through here. It imports chat, claudehook and state only.
package approval

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/state"
)

// IDKind is the custom_id kind of every card component.
const IDKind = "p"

// Tool names with cards of their own.
const (
	toolAsk  = "AskUserQuestion"
	toolPlan = "ExitPlanMode"
)

// Action is what a person did on a card: the action and arguments from the
// component's custom_id, the chosen select values, or a modal's fields.
type Action struct {
	Name   string
	Args   []string
	Values []string
	Fields map[string]string
	User   string // who, for the card
}

// Result says how to answer the interaction.
type Result struct {
	// Modal, when set, is opened instead of updating the card.
	Modal *chat.Modal
	// Notice, when set, is told to the clicker alone; the card is unchanged.
	Notice string
}

// ErrUnknownAction is returned for a custom_id action this card lacks.
var ErrUnknownAction = errors.New("unknown card action")

// Apply applies an action to a pending request, changing it in place:
// a decision, a new step, or recorded answers. The caller stores the
// request and renders it again (unless the result asks for a modal or a
// notice).
func Apply(id string, req *state.Request, a Action) (Result, error) {
	switch req.ToolName {
	case toolAsk:
		return applyQuestion(id, req, a)
	case toolPlan:
		return applyPlan(id, req, a)
	}
	return applyPermission(id, req, a)
}

// Render draws the card for a request as it stands.
func Render(id string, req state.Request) chat.Message {
	tail := ""
	if req.Status != state.RequestPending {
		tail = "\n\n" + clip(statusLine(req), maxStatus)
	}
	room := chat.Limit - len([]rune(tail))
	var m chat.Message
	switch req.ToolName {
	case toolAsk:
		m = renderQuestion(id, req)
	case toolPlan:
		m = renderPlan(id, req)
	default:
		m = renderPermission(id, req, room)
	}
	if req.Status != state.RequestPending {
		m.Rows = nil
	}
	// Every card fits Discord's limit, whatever the model wrote.
	m.Content = fitContent(m.Content, tail)
	return m
}

// maxStatus bounds what a closed card says about how it closed, so the
// card itself keeps most of the room.
const maxStatus = chat.Limit / 2

// clip shortens s to at most n characters, marking the cut with "…".
func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:max(n-1, 0)]) + "…"
	}
	return s
}

func statusLine(req state.Request) string {
	switch req.Status {
	case state.RequestDecided:
		return req.Outcome
	case state.RequestTerminal:
		return "🖥️ Answered in the terminal."
	case state.RequestExpired:
		return "⌛ Expired: no answer came in time. The dialog is still open in the terminal; answer it there or with /screen."
	case state.RequestInterrupted:
		return "⏹️ Interrupted: the prompt was dismissed in the terminal (or the turn stopped)."
	case state.RequestFailed:
		return "⚠️ This card could not be used; answer in the terminal or with /screen."
	}
	return ""
}

// fitContent appends tail to content, shortening content so the whole
// stays within Discord's limit.
func fitContent(content, tail string) string {
	tail = clip(tail, maxStatus)
	return clip(content, chat.Limit-len([]rune(tail))) + tail
}

// decide records a decision on the request.
func decide(req *state.Request, d claudehook.Decision, outcome string) error {
	b, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("encode decision: %w", err)
	}
	req.Status, req.Decision, req.Outcome, req.Step = state.RequestDecided, b, outcome, ""
	return nil
}

// cid builds a component's custom_id.
func cid(instance, id, action string, args ...string) string {
	s, err := chat.ID{Instance: instance, Kind: IDKind, Args: append([]string{id, action}, args...)}.Encode()
	if err != nil {
		// Instance and request ids are ours and short: an encoding failure is a bug.
		panic(err)
	}
	return s
}

func arg(a Action, i int) (int, bool) {
	if i >= len(a.Args) {
		return 0, false
	}
	n, err := strconv.Atoi(a.Args[i])
	return n, err == nil && n >= 0
}

// codeBlock quotes text in a fenced block that it cannot break out of,
// of at most limit characters in all.
func codeBlock(lang, text string, limit int) string {
	text = strings.ReplaceAll(text, "```", "ʼʼʼ")
	open, end := "```"+lang+"\n", "\n```"
	room := max(limit-len([]rune(open+end)), 0)
	if r := []rune(text); len(r) > room {
		text = string(r[:max(room-2, 0)]) + "\n…"
	}
	return open + text + end
}

// Decode reads the decision a decided request carries.
func Decode(req state.Request) (claudehook.Decision, error) {
	var d claudehook.Decision
	if err := json.Unmarshal(req.Decision, &d); err != nil {
		return d, fmt.Errorf("decode decision: %w", err)
	}
	return d, nil
}
