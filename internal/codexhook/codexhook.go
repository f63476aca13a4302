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
	"encoding/json"
	"errors"
	"fmt"
	"os"
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

// FinalReply returns the turn's reply: every message the model wrote after
// its last tool call in turn turnID, joined by blank lines. Codex's Stop
// payload holds only the last of them (last_assistant_message). found is
// false until the rollout holds that last message.
func FinalReply(path, turnID, last string) (text string, found bool, err error) {
	if turnID == "" {
		return "", false, errors.New("no turn_id")
	}
	var msgs []string
	err = scan(path, func(l *line) bool {
		if l.Type != "event_msg" || l.Payload.Type != "item_completed" || l.Payload.TurnID != turnID {
			return true
		}
		switch l.Payload.Item.Type {
		case "AgentMessage":
			var parts []string
			for _, c := range l.Payload.Item.Content {
				parts = append(parts, c.Text)
			}
			msgs = append(msgs, strings.Join(parts, ""))
		case "UserMessage", "Reasoning":
		default: // a command, a patch, a tool: what came before was progress
			msgs = nil
		}
		return true
	})
	if err != nil || len(msgs) == 0 {
		return "", false, err
	}
	if last != "" && strings.TrimSpace(msgs[len(msgs)-1]) != strings.TrimSpace(last) {
		return "", false, nil
	}
	return strings.Join(msgs, "\n\n"), true, nil
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
