package codexhook

import (
	"bytes"
	"encoding/json"
	"strings"
)

// PlanOf returns the plan Codex proposed in turn turnID (Plan mode: the
// model's <proposed_plan> block, which Codex strips from the Stop hook's
// last_assistant_message and records as an item_completed of type "Plan";
// agents.md §1.4), the last one when there are several. found is false
// when the turn proposed none.
func PlanOf(path, turnID string) (plan string, found bool, err error) {
	id := []byte(turnID)
	err = scanLines(path, func(b []byte) bool {
		if !bytes.Contains(b, id) {
			return true // another turn's: not decoded
		}
		var l struct {
			Type    string `json:"type"`
			Payload struct {
				Type   string `json:"type"`
				TurnID string `json:"turn_id"`
				Item   struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"item"`
			} `json:"payload"`
		}
		if json.Unmarshal(b, &l) != nil || l.Type != "event_msg" || l.Payload.Type != "item_completed" ||
			l.Payload.TurnID != turnID || l.Payload.Item.Type != "Plan" || strings.TrimSpace(l.Payload.Item.Text) == "" {
			return true
		}
		plan, found = l.Payload.Item.Text, true
		return true
	})
	return plan, found, err
}
