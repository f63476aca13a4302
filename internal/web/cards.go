package web

import (
	"encoding/json"
	"html/template"
	"regexp"

	"github.com/ccbridge/ccbridge/internal/state"
)

// mention is a Discord user mention in a card's outcome: only an owner
// decides a card, and the page has no name to show for the id.
var mention = regexp.MustCompile(`<@!?[0-9]+>`)

// cardView is a card as the session page shows it.
type cardView struct {
	Tool, Input, At string
	Outcome         template.HTML
}

// cardViews renders a session's cards; every text passes through red.
func cardViews(cards []Card, red func(string) string) []cardView {
	out := make([]cardView, 0, len(cards))
	for _, c := range cards {
		in, _ := toolInput(json.RawMessage(c.Input))
		v := cardView{Tool: red(c.Tool), Input: clipShown(red(in)), At: c.At.UTC().Format("2006-01-02 15:04 MST")}
		if c.Outcome != "" {
			v.Outcome = markdown(mention.ReplaceAllString(red(c.Outcome), "an owner"))
		} else {
			v.Outcome = template.HTML(template.HTMLEscapeString(cardStatus(c.Status))) //nolint:gosec // escaped
		}
		out = append(out, v)
	}
	return out
}

// cardStatus says what became of a card that records no outcome.
func cardStatus(status string) string {
	switch status {
	case state.RequestPending:
		return "Waiting for an answer."
	case state.RequestTerminal:
		return "Answered in the terminal."
	case state.RequestExpired:
		return "Expired: answered in the terminal, or not at all."
	case state.RequestInterrupted:
		return "Interrupted: the turn ended before an answer."
	case state.RequestFailed:
		return "The card could not be posted: answered in the terminal."
	}
	return status
}
