package codexhook

import (
	"errors"
	"strings"
)

// ReplyNow returns which reply of turn turnID an event that fires now
// belongs to, numbered as ReplyOf numbers them: 1 until a message is
// injected into the running turn, n+1 after n such messages (agents.md
// §1.7). prompt is a UserPromptSubmit's prompt ("" for other events):
// Codex fires it when it injects the message, which may come before the
// rollout holds it, so a prompt the model has begun the turn before is
// taken as the next reply's even then.
func ReplyNow(path, turnID, prompt string) (int, error) {
	if turnID == "" {
		return 0, errors.New("no turn_id")
	}
	injected, started, last := 0, false, ""
	err := scanTurn(path, turnID, func(l *line) bool {
		if l.Type != "event_msg" || l.Payload.Type != "item_completed" || l.Payload.TurnID != turnID {
			return true
		}
		switch l.Payload.Item.Type {
		case "UserMessage":
			if started { // the prompt itself comes first
				injected++
				last = strings.TrimSpace(l.text())
			}
		default: // as ReplyOf counts, whose numbers the Stop's reply takes
			started = true
		}
		return true
	})
	if err != nil {
		return 0, err
	}
	n := injected + 1
	if p := strings.TrimSpace(prompt); p != "" && started && (injected == 0 || last != p) {
		n++ // injected, not in the rollout yet
	}
	return n, nil
}
