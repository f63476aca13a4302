package codexhook

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// Failure is why a turn ended in an API error. Codex fires no hook then
// (no Stop, no Interrupt: agents.md §1.2); its rollout's task_complete
// carries the error, the one turn-end signal that covers errors (§1.5).
type Failure struct {
	// Message is the API's own message when the error is OpenAI's error
	// body, else Codex's text as it stands.
	Message string
	// Kind is that body's error type. Codex's own codex_error_info is
	// "other" for a 400 and a structure for a 429 (0.171.0): nothing a
	// person reads.
	Kind string
}

// TurnEnd reads the rollout from byte offset from for turn turnID's
// task_complete. ended says it is there, and f is its error (zero when
// the turn did not fail). next is where reading stopped: after that line,
// or after the last whole line (one half written is read again next time),
// so a watcher reads only what Codex appended since.
func TurnEnd(path, turnID string, from int64) (f Failure, ended bool, next int64, err error) {
	file, err := os.Open(path)
	if err != nil {
		return Failure{}, false, from, fmt.Errorf("open rollout: %w", err)
	}
	defer file.Close()
	if _, err := file.Seek(from, io.SeekStart); err != nil {
		return Failure{}, false, from, fmt.Errorf("seek rollout: %w", err)
	}
	r := bufio.NewReader(file)
	next = from
	for {
		b, rerr := r.ReadBytes('\n')
		if rerr != nil {
			if errors.Is(rerr, io.EOF) {
				return Failure{}, false, next, nil
			}
			return Failure{}, false, next, fmt.Errorf("read rollout: %w", rerr)
		}
		next += int64(len(b))
		if !bytes.Contains(b, []byte(`"task_complete"`)) {
			continue // most lines, some of them large: not decoded
		}
		var l struct {
			Type    string `json:"type"`
			Payload struct {
				Type   string `json:"type"`
				TurnID string `json:"turn_id"`
				Error  *struct {
					Message string `json:"message"`
				} `json:"error"`
			} `json:"payload"`
		}
		if json.Unmarshal(b, &l) != nil || l.Type != "event_msg" || l.Payload.Type != "task_complete" || l.Payload.TurnID != turnID {
			continue
		}
		if e := l.Payload.Error; e != nil {
			f = failure(e.Message)
		}
		return f, true, next, nil
	}
}

// failure reads Codex's error: its message is the API's response body
// when the API refused the request (a 400), else Codex's own words ("exceeded
// retry limit, last status: 429 Too Many Requests").
func failure(msg string) Failure {
	f := Failure{Message: strings.TrimSpace(msg)}
	var body struct {
		Error struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(f.Message), &body) == nil && body.Error.Message != "" {
		f.Message, f.Kind = body.Error.Message, body.Error.Type
	}
	if f.Message == "" { // an error all the same: the turn must end
		f.Message = "the model API failed"
	}
	return f
}
