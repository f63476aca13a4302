package claudehook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// Entry is one transcript line, reduced to the fields ccbridge reads. Each
// content block of an assistant message is its own line; lines of one
// message share Message.ID and are numbered by APIBlockIndex. Lines are not
// always written in chronological order, so order comes from those fields,
// never from the position in the file.
type Entry struct {
	Type          string `json:"type"` // user, assistant, system, attachment, …
	IsSidechain   bool   `json:"isSidechain"`
	APIBlockIndex int    `json:"apiBlockIndex"`
	Message       struct {
		ID         string          `json:"id"`
		Role       string          `json:"role"`
		StopReason string          `json:"stop_reason"`
		Content    json.RawMessage `json:"content"` // a string or a list of blocks
	} `json:"message"`
}

// Block is one content block.
type Block struct {
	Type      string `json:"type"` // text, tool_use, tool_result, thinking
	Text      string `json:"text,omitempty"`
	ID        string `json:"id,omitempty"`
	Name      string `json:"name,omitempty"`
	ToolUseID string `json:"tool_use_id,omitempty"`
}

// Blocks decodes the entry's content as blocks; plain string content (a
// typed user prompt) becomes one text block.
func (e Entry) Blocks() []Block {
	c := bytes.TrimSpace(e.Message.Content)
	if len(c) == 0 {
		return nil
	}
	if c[0] == '"' {
		var s string
		if json.Unmarshal(c, &s) == nil {
			return []Block{{Type: "text", Text: s}}
		}
		return nil
	}
	var bs []Block
	_ = json.Unmarshal(c, &bs)
	return bs
}

// Tail sizes: start small (a turn's final message is at the end, give or
// take a few lines written out of order) and grow to at most 1 MiB, so the
// cost of a hook does not grow with the transcript. A message not found in
// the last MiB is reported as not written yet.
const (
	tailStart = 64 << 10
	tailMax   = 1 << 20
)

// FinalReply returns the text of a turn's final assistant message: every
// text block of it, in block order, joined by a blank line. The Stop
// payload's last_assistant_message is only the last block; it identifies the
// message (the newest entry holding that text, preferring one that ended the
// turn) among those of the turn promptID (see turnLines): an earlier turn's
// message ending the same way ("Done.") is not this one. found is false when
// the transcript does not hold it yet: Claude Code may fire Stop before it
// has written the final lines. With an empty last, the newest assistant
// message of the turn is taken.
func FinalReply(path, last, promptID string) (text string, found bool, err error) {
	for size := int64(tailStart); ; size *= 4 {
		lines, whole, err := tailLines(path, size)
		if err != nil {
			return "", false, err
		}
		if text, ok := finalReply(turnLines(lines, promptID), last); ok {
			return text, true, nil
		}
		if whole || size >= tailMax {
			return "", false, nil
		}
	}
}

// turnLines returns the lines of the turn promptID: those after the first
// line carrying its promptId (the person's prompt, then tool results),
// else, when the tail starts inside the turn, those after the last line
// carrying another turn's; up to the next turn's first line. Lines without
// promptId (assistant lines) belong to the turn they follow. A transcript
// without promptIds, or no promptID, leaves the lines as they are.
func turnLines(lines [][]byte, promptID string) [][]byte {
	if promptID == "" {
		return lines
	}
	ids := make([]string, len(lines))
	first := -1
	for i, line := range lines {
		if !bytes.Contains(line, []byte(`"promptId"`)) {
			continue
		}
		var e struct {
			PromptID string `json:"promptId"`
		}
		if json.Unmarshal(line, &e) != nil || e.PromptID == "" {
			continue
		}
		ids[i] = e.PromptID
		if first < 0 && e.PromptID == promptID {
			first = i
		}
	}
	start := 0
	if first >= 0 {
		start = first + 1
	} else {
		for i, id := range ids {
			if id != "" {
				start = i + 1
			}
		}
	}
	for i := start; i < len(lines); i++ {
		if ids[i] != "" && ids[i] != promptID {
			return lines[start:i]
		}
	}
	return lines[start:]
}

type assistantLine struct {
	msgID      string
	blockIndex int
	stopReason string
	texts      []string
}

func finalReply(lines [][]byte, last string) (string, bool) {
	var all []assistantLine
	for _, line := range lines {
		// Most lines (tool results, api-request blobs with whole system
		// prompts) are not assistant lines: skip them without decoding.
		if !bytes.Contains(line, []byte(`"assistant"`)) {
			continue
		}
		var e Entry
		if json.Unmarshal(line, &e) != nil || e.IsSidechain || e.Type != "assistant" {
			continue
		}
		al := assistantLine{msgID: e.Message.ID, blockIndex: e.APIBlockIndex, stopReason: e.Message.StopReason}
		for _, b := range e.Blocks() {
			if b.Type == "text" && strings.TrimSpace(b.Text) != "" {
				al.texts = append(al.texts, b.Text)
			}
		}
		all = append(all, al)
	}
	msgID, ended := "", false
	for i := len(all) - 1; i >= 0; i-- {
		a := all[i]
		if last != "" && !slices.Contains(a.texts, last) {
			continue
		}
		if msgID == "" || (!ended && a.stopReason == "end_turn") {
			msgID, ended = a.msgID, a.stopReason == "end_turn"
		}
		if ended || last == "" {
			break
		}
	}
	if msgID == "" {
		return "", false
	}
	var parts []assistantLine
	for _, a := range all {
		if a.msgID == msgID {
			parts = append(parts, a)
		}
	}
	slices.SortStableFunc(parts, func(a, b assistantLine) int { return a.blockIndex - b.blockIndex })
	var texts []string
	for _, p := range parts {
		texts = append(texts, p.texts...)
	}
	return strings.Join(texts, "\n\n"), true
}

// tailLines returns the complete lines within the last size bytes of the
// file; whole reports that the read reached the start of the file.
func tailLines(path string, size int64) (lines [][]byte, whole bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, fmt.Errorf("read transcript: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, fmt.Errorf("read transcript: %w", err)
	}
	off := max(fi.Size()-size, 0)
	buf := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
		return nil, false, fmt.Errorf("read transcript: %w", err)
	}
	if off > 0 {
		// The first line is cut; skip it.
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			buf = buf[i+1:]
		} else {
			buf = nil
		}
	}
	for line := range bytes.SplitSeq(buf, []byte{'\n'}) {
		if len(bytes.TrimSpace(line)) > 0 {
			lines = append(lines, line)
		}
	}
	return lines, off == 0, nil
}

// TextBefore returns the text blocks of the assistant message that holds
// the tool call toolUseID, in block order, up to that call, with the
// message id and each block's index (for de-duplication). Claude Code has
// written them by the time PreToolUse runs (claude-code-protocol.md §9).
// found is false when the call is not in the last MiB.
func TextBefore(path, toolUseID string) (msgID string, blocks []IndexedText, found bool, err error) {
	for size := int64(tailStart); ; size *= 4 {
		lines, whole, err := tailLines(path, size)
		if err != nil {
			return "", nil, false, err
		}
		if id, texts, ok := textBefore(lines, toolUseID); ok {
			return id, texts, true, nil
		}
		if whole || size >= tailMax {
			return "", nil, false, nil
		}
	}
}

// IndexedText is one text block and its index in its message.
type IndexedText struct {
	Index int
	Text  string
}

func textBefore(lines [][]byte, toolUseID string) (string, []IndexedText, bool) {
	needle := []byte(toolUseID)
	msgID, toolIndex := "", -1
	for i := len(lines) - 1; i >= 0 && msgID == ""; i-- {
		if !bytes.Contains(lines[i], needle) || !bytes.Contains(lines[i], []byte(`"assistant"`)) {
			continue
		}
		var e Entry
		if json.Unmarshal(lines[i], &e) != nil || e.Type != "assistant" {
			continue
		}
		for _, b := range e.Blocks() {
			if b.Type == "tool_use" && b.ID == toolUseID {
				msgID, toolIndex = e.Message.ID, e.APIBlockIndex
			}
		}
	}
	if msgID == "" {
		return "", nil, false
	}
	var texts []IndexedText
	for _, line := range lines {
		if !bytes.Contains(line, []byte(msgID)) {
			continue
		}
		var e Entry
		if json.Unmarshal(line, &e) != nil || e.Type != "assistant" || e.Message.ID != msgID || e.APIBlockIndex >= toolIndex {
			continue
		}
		for _, b := range e.Blocks() {
			if b.Type == "text" && strings.TrimSpace(b.Text) != "" {
				texts = append(texts, IndexedText{Index: e.APIBlockIndex, Text: b.Text})
			}
		}
	}
	slices.SortStableFunc(texts, func(a, b IndexedText) int { return a.Index - b.Index })
	return msgID, texts, true
}
