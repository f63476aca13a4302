// Package approval is the logic of the cards that let a person answer
// Claude Code from Discord: permission prompts (allow, always…, deny, deny
// with instructions), AskUserQuestion (options, multi-select, free text),
// and plan approval. It renders a request as a chat message, applies a
// click or a modal to it, and builds the decision Claude Code expects. It
// is pure: the hook posts the card and waits, the router applies clicks,
// both through here. It imports chat, claudehook, redact and state only.
package approval

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/redact"
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
	// Unmasked says whoever acted saw the request as it is. A card is
	// redacted on its way to Discord, so a click (false) cannot allow a
	// request the redaction masked; the MCP front end shows it whole.
	Unmasked bool
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
		tail = "\n\n" + clip(StatusLine(req), maxStatus)
	}
	room := chat.Limit - len([]rune(tail))
	var m chat.Message
	switch req.ToolName {
	case toolAsk:
		m = renderQuestion(id, req)
	case toolPlan:
		m = renderPlan(id, req, room)
	default:
		m = renderPermission(id, req, room)
	}
	if req.Status != state.RequestPending {
		m.Rows = nil
	}
	// Every card fits Discord's limit, whatever the model wrote, also
	// after the redaction on its way there: it is measured redacted
	// (redacting again is a no-op), so a mask longer than what it hides
	// cannot push it over.
	m.Content = fitContent(redact.String(m.Content), redact.String(tail))
	return m
}

// anyMasked reports whether the redaction that everything posted to
// Discord goes through (internal/discord) would mask any of texts.
func anyMasked(texts ...string) bool {
	for _, s := range texts {
		if _, found := redact.Find(s); len(found) > 0 {
			return true
		}
	}
	return false
}

// maxStatus bounds what a closed card says about how it closed, so the
// card itself keeps most of the room.
const maxStatus = chat.Limit / 2

// clip shortens s to at most n characters, marking the cut with "…".
// Like every cut on a card, it masks secrets first: a secret cut in two
// no longer looks like one, and its head would be shown.
func clip(s string, n int) string {
	if r := []rune(redact.String(s)); len(r) > n {
		return string(r[:max(n-1, 0)]) + "…"
	}
	return s
}

// StatusLine says how a closed card was closed ("" while it is pending).
func StatusLine(req state.Request) string {
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
// of at most limit characters in all. Text that does not fit keeps its
// head and its tail (where a payload hides behind padding), and says how
// much is cut between them.
func codeBlock(lang, text string, limit int) string {
	r := []rune(codeText(redact.String(text)))
	room := max(limit-len([]rune(fence(lang, ""))), 0)
	if len(r) <= room {
		return fence(lang, string(r))
	}
	cutAt := func(n int) string { return fmt.Sprintf("\n… ✂ %d characters cut here …\n", n) }
	keep := max(room-len([]rune(cutAt(len(r)))), 0)
	head, tail := keep*3/5, keep-keep*3/5
	return fence(lang, string(r[:head])+cutAt(len(r)-head-tail)+string(r[len(r)-tail:]))
}

func fence(lang, text string) string { return "```" + lang + "\n" + text + "\n```" }

// codeText is text as a code block shows it: no fence to break out with,
// and every character that would hide or reorder what is shown made
// visible.
func codeText(text string) string {
	return visible(strings.ReplaceAll(text, "```", "ʼʼʼ"), "\n\t")
}

// visible replaces control characters (but those in keep), bidi controls
// and invisible characters with their code point, so a card shows what
// runs.
func visible(s, keep string) string {
	return strings.Map(func(r rune) rune {
		if strings.ContainsRune(keep, r) {
			return r
		}
		if hidden(r) {
			return -1
		}
		return r
	}, strings.NewReplacer(hiddenPairs()...).Replace(s))
}

func hidden(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
		return true
	case r == 0x061c, r == 0x200b, r == 0x200c, r == 0x200d, r == 0x200e, r == 0x200f, r == 0x2060, r == 0xfeff:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// hiddenPairs maps each hidden character to its visible name, ⟨U+202E⟩.
var hiddenPairs = sync.OnceValue(func() []string {
	var pairs []string
	for r := rune(0); r <= 0xfeff; r++ {
		if hidden(r) && r != '\n' && r != '\t' {
			pairs = append(pairs, string(r), fmt.Sprintf("⟨U+%04X⟩", r))
		}
	}
	return pairs
})

// escapeMarkdown makes untrusted text (the model's description of a
// call) plain: one line (so no heading, quote or list can start; callers
// put it after an emoji), and every inline markdown character escaped, so
// it cannot draw a code block, bold, a masked link or a mention.
func escapeMarkdown(s string) string {
	s = visible(strings.Join(strings.Fields(s), " "), "")
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("\\`*_~|[]<@", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// inlineCode shows a path in an inline code span it cannot leave, its head
// and tail when it is long.
func inlineCode(s string) string {
	s = strings.ReplaceAll(visible(strings.Join(strings.Fields(redact.String(s)), " "), ""), "`", "ʼ")
	if r := []rune(s); len(r) > maxPath {
		s = string(r[:maxPath/2]) + "…" + string(r[len(r)-maxPath/2:])
	}
	return "`" + s + "`"
}

// attachName is a safe file name for the attached content of a Write.
func attachName(path string) string {
	base := filepath.Base(path)
	var b strings.Builder
	for _, r := range base {
		if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_') {
			b.WriteRune(r)
		}
	}
	name := strings.TrimLeft(b.String(), ".")
	if name == "" || len(name) > 60 {
		return "content.txt"
	}
	return name
}

// Decode reads the decision a decided request carries.
func Decode(req state.Request) (claudehook.Decision, error) {
	var d claudehook.Decision
	if err := json.Unmarshal(req.Decision, &d); err != nil {
		return d, fmt.Errorf("decode decision: %w", err)
	}
	return d, nil
}
