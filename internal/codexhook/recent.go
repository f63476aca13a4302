package codexhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// ToolEvent is one tool call of a rollout and how it went.
type ToolEvent struct {
	ID     string
	Name   string // as Codex's hooks name it: a shell command is "Bash"
	Status string // running, done, error
}

// Activity is what a rollout's tail says a session did: the model's recent
// messages (as lines, newest last), its tool calls, how many prompts
// people typed, and whether an Escape ended the turn after the newest.
type Activity struct {
	Output      []string
	Tools       []ToolEvent
	Turns       int
	Interrupted bool
}

// recentTail bounds what Recent reads of a rollout.
const recentTail = 1 << 20

// Recent reads the last MiB of a rollout: at most lines lines of the
// model's messages, and the tool calls in order.
func Recent(path string, lines int) (Activity, error) {
	raw, err := tail(path, recentTail)
	if err != nil {
		return Activity{}, err
	}
	var a Activity
	index := map[string]int{}
	for _, b := range raw {
		if !bytes.Contains(b, []byte(`"item_completed"`)) && !bytes.Contains(b, []byte(`"function_call"`)) &&
			!bytes.Contains(b, []byte(`"turn_aborted"`)) {
			continue // most lines, some of them large: not decoded
		}
		var l struct {
			Type    string `json:"type"`
			Payload struct {
				Type   string `json:"type"`
				Name   string `json:"name"`
				CallID string `json:"call_id"`
				Item   struct {
					Type     string `json:"type"`
					ID       string `json:"id"`
					ExitCode *int   `json:"exit_code"`
					Content  []struct {
						Text string `json:"text"`
					} `json:"content"`
				} `json:"item"`
			} `json:"payload"`
		}
		if json.Unmarshal(b, &l) != nil {
			continue
		}
		p := l.Payload
		switch {
		case l.Type == "response_item" && p.Type == "function_call":
			index[p.CallID] = len(a.Tools)
			a.Tools = append(a.Tools, ToolEvent{ID: p.CallID, Name: toolName(p.Name), Status: "running"})
		case l.Type == "response_item" && p.Type == "function_call_output":
			// A call with no CommandExecution item (apply_patch, …) has
			// ended when its output is back.
			if i, ok := index[p.CallID]; ok && a.Tools[i].Status == "running" {
				a.Tools[i].Status = "done"
			}
		case l.Type == "event_msg" && p.Type == "turn_aborted":
			a.Interrupted = true
		case l.Type == "event_msg" && p.Type == "item_completed":
			var text []string
			for _, c := range p.Item.Content {
				text = append(text, c.Text)
			}
			t := strings.TrimSpace(strings.Join(text, "\n\n"))
			switch p.Item.Type {
			case "AgentMessage":
				if t != "" {
					a.Output = append(a.Output, strings.Split(t, "\n")...)
				}
			case "UserMessage":
				// What a hook or Codex writes as the user is a tag.
				if t != "" && !strings.HasPrefix(t, "<") {
					a.Turns++
					a.Interrupted = false
				}
			case "CommandExecution":
				if i, ok := index[p.Item.ID]; ok {
					a.Tools[i].Status = "done"
					if p.Item.ExitCode != nil && *p.Item.ExitCode != 0 {
						a.Tools[i].Status = "error"
					}
				}
			}
		}
	}
	if lines > 0 && len(a.Output) > lines {
		a.Output = a.Output[len(a.Output)-lines:]
	}
	return a, nil
}

// toolName is a Codex function as its hooks name the tool: its shell
// functions run commands, which the hooks call Bash (agents.md §1.3.2).
func toolName(fn string) string {
	switch fn {
	case "exec_command", "shell", "exec":
		return "Bash"
	}
	return fn
}

// tail returns the whole lines of the last size bytes of a rollout; a
// first line cut by the bound and a last one half written are left out.
func tail(path string, size int64) ([][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open rollout: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read rollout: %w", err)
	}
	off := max(fi.Size()-size, 0)
	buf := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read rollout: %w", err)
	}
	if off > 0 {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			return nil, nil
		}
		buf = buf[i+1:]
	}
	var out [][]byte
	for line := range bytes.SplitSeq(buf, []byte{'\n'}) {
		if len(bytes.TrimSpace(line)) > 0 {
			out = append(out, line)
		}
	}
	return out, nil
}
