// Package codexhook reads what Codex CLI 0.171.0 gives ccbridge's hooks
// beyond the payload (docs agents.md §1.3, §1.5): its transcript, the
// "rollout", a JSONL file of {"type", "payload"} lines. Codex's hook
// payloads have Claude Code's shape and decode as claudehook.Input; the
// hooks learn that Codex runs them from AgentFlag on their command line.
// Like claudehook it imports no other internal package: the hook binaries
// link it.
package codexhook

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
)

// AgentFlag on a hook's command line says Codex runs the hook.
const AgentFlag = "--agent=codex"

// EventInterrupt fires when an Escape ends a turn (Codex fires no Stop
// then).
const EventInterrupt = "Interrupt"

// line is one rollout line; only the fields read here.
type line struct {
	Type    string `json:"type"`
	Payload struct {
		Type   string `json:"type"`
		TurnID string `json:"turn_id"`
		// event_msg item_completed.
		Item struct {
			Type    string `json:"type"`
			ID      string `json:"id"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"item"`
		// response_item message and function_call.
		ID      string `json:"id"`
		Role    string `json:"role"`
		CallID  string `json:"call_id"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	} `json:"payload"`
}

// maxLine bounds one rollout line (a tool output may be large).
const maxLine = 64 << 20

// scanLines calls each with every line of the rollout, until it returns
// false.
func scanLines(path string, each func(b []byte) bool) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open rollout: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, maxLine)
	for sc.Scan() {
		if !each(sc.Bytes()) {
			return nil
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read rollout: %w", err)
	}
	return nil
}

// scan calls each for every line of the rollout; a line that does not
// decode (the last one, half written) is skipped.
func scan(path string, each func(l *line) bool) error {
	return scanLines(path, func(b []byte) bool {
		var l line
		return json.Unmarshal(b, &l) != nil || each(&l)
	})
}

// scanTurn is scan over the lines that may be turn turnID's: a line not
// naming it is skipped before it is decoded, which the hooks Codex waits
// for on every tool call cannot afford for a whole long rollout.
func scanTurn(path, turnID string, each func(l *line) bool) error {
	id := []byte(turnID)
	return scanLines(path, func(b []byte) bool {
		if !bytes.Contains(b, id) {
			return true
		}
		var l line
		return json.Unmarshal(b, &l) != nil || each(&l)
	})
}

// FinalReply returns the reply that message last ends in turn turnID,
// from the turn's reply from on (1 for the first): a message injected
// into a running turn continues it (agents.md §1.7), so a turn may hold
// several replies, each answering its own message, and the replies the
// hooks have not posted yet go out together. A reply is every message
// the model wrote after its last tool call and after the user message it
// answers, joined by blank lines. Codex's Stop payload holds only its
// last message (last_assistant_message). found is false until the
// rollout holds that last message; with none to match, the reply is the
// turn's messages as they stand.
func FinalReply(path, turnID, last string, from int) (text string, found bool, err error) {
	if turnID == "" {
		return "", false, errors.New("no turn_id")
	}
	var (
		replies   []string // the replies before this one, from on
		msgs      []string // this one so far
		reply     []string // through the last message matching last
		n         = 1
		started   bool
		trimmedTo = strings.TrimSpace(last)
	)
	err = scan(path, func(l *line) bool {
		if l.Type != "event_msg" || l.Payload.Type != "item_completed" || l.Payload.TurnID != turnID {
			return true
		}
		switch l.Payload.Item.Type {
		case "AgentMessage":
			started = true
			msgs = append(msgs, l.text())
			if last == "" || strings.TrimSpace(msgs[len(msgs)-1]) == trimmedTo {
				// The last match: a later reply may end the same way.
				reply = slices.Concat(replies, msgs)
			}
		case "Reasoning":
		case "UserMessage":
			if started { // injected: the next reply begins
				if n >= from && len(msgs) > 0 {
					replies = append(replies, msgs...)
				}
				n++
			}
			msgs = nil
		default: // a command, a patch, a tool: what came before was progress
			started = true
			msgs = nil
		}
		return true
	})
	if last == "" {
		reply = slices.Concat(replies, msgs)
	}
	if err != nil || len(reply) == 0 {
		return "", false, err
	}
	return strings.Join(reply, "\n\n"), true, nil
}

// ReplyOf returns which reply of turn turnID message last ends: 1 for
// the reply to the turn's prompt, n+1 after n messages injected into the
// running turn (agents.md §1.7; their Stops all carry turnID). found is
// false until the rollout holds the message; of several replies ending
// the same way, the last is meant.
func ReplyOf(path, turnID, last string) (n int, found bool, err error) {
	if turnID == "" || strings.TrimSpace(last) == "" {
		return 0, false, errors.New("no turn_id or no last message")
	}
	injected, started := 0, false
	err = scan(path, func(l *line) bool {
		if l.Type != "event_msg" || l.Payload.Type != "item_completed" || l.Payload.TurnID != turnID {
			return true
		}
		switch l.Payload.Item.Type {
		case "UserMessage":
			if started { // the prompt itself comes first
				injected++
			}
		case "AgentMessage":
			started = true
			if strings.TrimSpace(l.text()) == strings.TrimSpace(last) {
				n, found = injected+1, true
			}
		default:
			started = true
		}
		return true
	})
	if err != nil {
		return 0, false, err
	}
	return n, found, nil
}

// text is an item's text.
func (l *line) text() string {
	var parts []string
	for _, c := range l.Payload.Item.Content {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, "")
}

// Message is one assistant message of the rollout.
type Message struct {
	ID, Text string
}

// TextBefore returns the messages the model wrote right before the tool
// call callID (after the call before it). found is false until the rollout
// holds the call.
func TextBefore(path, callID string) (msgs []Message, found bool, err error) {
	var pending []Message
	err = scan(path, func(l *line) bool {
		if l.Type != "response_item" {
			return true
		}
		switch {
		case l.Payload.Type == "message" && l.Payload.Role == "user":
			// A message injected into the running turn: what came before
			// it was the previous reply, not this call's text.
			pending = nil
		case l.Payload.Type == "message" && l.Payload.Role == "assistant":
			var parts []string
			for _, c := range l.Payload.Content {
				parts = append(parts, c.Text)
			}
			pending = append(pending, Message{ID: l.Payload.ID, Text: strings.Join(parts, "")})
		case l.Payload.CallID != "" && strings.HasSuffix(l.Payload.Type, "_call"):
			if l.Payload.CallID == callID {
				msgs, found = pending, true
				return false
			}
			pending = nil
		}
		return true
	})
	return msgs, found, err
}

// Usage is what the rollout says of the session's model and context
// window, as of its last token_count. Codex reports no cost.
type Usage struct {
	Model string
	// Tokens is the last request's total (what the context holds);
	// Window is the model's context window.
	Tokens, Window int64
}

// LastUsage reads the last token_count of the rollout, and the model of
// the last turn_context; ok is false when there is no token_count yet.
func LastUsage(path string) (u Usage, ok bool, err error) {
	err = scanLines(path, func(b []byte) bool {
		var l struct {
			Type    string `json:"type"`
			Payload struct {
				Type  string `json:"type"`
				Model string `json:"model"`
				Info  *struct {
					Last struct {
						Total int64 `json:"total_tokens"`
					} `json:"last_token_usage"`
					Window int64 `json:"model_context_window"`
				} `json:"info"`
			} `json:"payload"`
		}
		if json.Unmarshal(b, &l) != nil {
			return true
		}
		switch p := l.Payload; {
		case l.Type == "turn_context" && p.Model != "":
			u.Model = p.Model
		case l.Type == "event_msg" && p.Type == "token_count" && p.Info != nil:
			u.Tokens, u.Window, ok = p.Info.Last.Total, p.Info.Window, true
		}
		return true
	})
	return u, ok, err
}
