package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"os"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/ccbridge/ccbridge/internal/claudehook"
)

// pageBytes is how much of a transcript's end one page reads: a long
// transcript is never read whole, so the first byte of the page costs the
// same for 10 KiB and 10 GiB.
const pageBytes = 128 << 10

// minPageItems is what a page would rather show: a window holding fewer
// items is widened, up to maxPageBytes.
const (
	minPageItems = 30
	maxPageBytes = 2 << 20
)

// maxShown bounds one tool input or result on a page; the rest is cut
// with a note (a `cat` of a big file would otherwise be the page).
const maxShown = 16 << 10

// chunk is a run of complete transcript lines and where they lie.
type chunk struct {
	lines      [][]byte
	start, end int64 // byte offsets: lines cover [start, end)
	skipped    int64 // the bytes of a line too long to show
}

// lineStart returns the offset of the line holding the byte at pos: just
// past the newline before it, or 0.
func lineStart(f *os.File, pos int64) (int64, error) {
	buf := make([]byte, 64<<10)
	for pos > 0 {
		from := max(pos-int64(len(buf)), 0)
		n, err := f.ReadAt(buf[:pos-from], from)
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, fmt.Errorf("read transcript: %w", err)
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return from + int64(i) + 1, nil
		}
		pos = from
	}
	return 0, nil
}

// readBefore returns the complete lines that end at or before the offset
// before (-1: the end of the file), reading at most size bytes back. A
// line cut by the window's start is left for the previous page; a line not
// yet ended by a newline is left for the live stream.
func readBefore(path string, before, size int64) (chunk, error) {
	f, err := os.Open(path)
	if err != nil {
		return chunk{}, fmt.Errorf("read transcript: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return chunk{}, fmt.Errorf("read transcript: %w", err)
	}
	if before < 0 || before > fi.Size() {
		before = fi.Size()
	}
	start := max(before-size, 0)
	buf := make([]byte, before-start)
	if _, err := f.ReadAt(buf, start); err != nil && !errors.Is(err, io.EOF) {
		return chunk{}, fmt.Errorf("read transcript: %w", err)
	}
	end := before
	if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
		end = start + int64(i) + 1
		buf = buf[:i+1]
	} else {
		end, buf = start, nil
	}
	if start > 0 {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			// The window lies inside one line not ended yet: the page
			// ends where it starts, and the live stream sends it whole.
			from, err := lineStart(f, start)
			if err != nil {
				return chunk{}, err
			}
			return chunk{start: from, end: from}, nil
		}
		if int64(i)+1 == int64(len(buf)) {
			// The window holds no whole line: one line is longer than a
			// page. It is passed over (a note says so), and the page ends
			// where it starts, so Earlier moves on.
			from, err := lineStart(f, start)
			if err != nil {
				return chunk{}, err
			}
			return chunk{start: from, end: end, skipped: end - from}, nil
		}
		start += int64(i) + 1
		buf = buf[i+1:]
	}
	c := chunk{start: start, end: end}
	for line := range bytes.SplitSeq(buf, []byte{'\n'}) {
		if len(bytes.TrimSpace(line)) > 0 {
			c.lines = append(c.lines, line)
		}
	}
	return c, nil
}

// item is one thing shown in the conversation.
type item struct {
	Kind    string // prompt, reply, tool, result
	Text    string
	HTML    template.HTML // a reply, rendered from Markdown
	Tool    string
	ID      string // the tool call's id
	Input   string
	Desc    string // what the call says it does (Bash's description)
	Result  *item  // a tool call's result, when it is on the same page
	IsError bool
}

// block is a content block with the fields the page shows beyond
// claudehook.Block's.
type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// lineItems turns one transcript line into what the page shows of it:
// prompts, replies (Markdown), tool calls and results. Subagent lines,
// meta lines and thinking are left out. Every text passes through red.
func lineItems(line []byte, red func(string) string) []item {
	// Lines of other types (prompt snapshots, request shapes: tens of KiB
	// each) are passed over with a scan for the type, not a decode.
	if t := gjson.GetBytes(line, "type").Str; t != "user" && t != "assistant" {
		return nil
	}
	// One decode per line: the page decodes a few hundred of them.
	var e struct {
		claudehook.Entry
		IsMeta  bool `json:"isMeta"`
		Message struct {
			Content json.RawMessage `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal(line, &e) != nil || e.IsSidechain || e.IsMeta || (e.Type != "user" && e.Type != "assistant") {
		return nil
	}
	var blocks []block
	c := bytes.TrimSpace(e.Message.Content)
	if len(c) > 0 && c[0] == '"' {
		var s string
		_ = json.Unmarshal(c, &s)
		blocks = []block{{Type: "text", Text: s}}
	} else {
		_ = json.Unmarshal(c, &blocks)
	}
	var out []item
	for _, b := range blocks {
		switch {
		case b.Type == "text" && strings.TrimSpace(b.Text) == "":
		case b.Type == "text" && e.Type == "user":
			out = append(out, item{Kind: "prompt", Text: red(b.Text)})
		case b.Type == "text":
			out = append(out, item{Kind: "reply", HTML: markdown(red(b.Text))})
		case b.Type == "tool_use":
			in, desc := toolInput(b.Input)
			out = append(out, item{Kind: "tool", Tool: b.Name, ID: b.ID, Input: clipShown(red(in)), Desc: red(desc)})
		case b.Type == "tool_result":
			out = append(out, item{Kind: "result", ID: b.ToolUseID, Text: clipShown(red(resultText(b.Content))), IsError: b.IsError})
		}
	}
	return out
}

// pageItems renders a chunk's lines, folding each result into its call
// when both are on the page.
func pageItems(lines [][]byte, red func(string) string) []item {
	var out []item
	calls := map[string]int{}
	for _, l := range lines {
		for _, it := range lineItems(l, red) {
			if it.Kind == "result" {
				if i, ok := calls[it.ID]; ok && out[i].Result == nil {
					r := it
					out[i].Result = &r
					continue
				}
			}
			if it.Kind == "tool" {
				calls[it.ID] = len(out)
			}
			out = append(out, it)
		}
	}
	return out
}

// toolInput shows a call's input: a command as it is (with its
// description apart), anything else as indented JSON.
func toolInput(in json.RawMessage) (shown, desc string) {
	var fields map[string]any
	if json.Unmarshal(in, &fields) == nil {
		cmd, isCmd := fields["command"].(string)
		desc, isDesc := fields["description"].(string)
		if isCmd && (len(fields) == 1 || len(fields) == 2 && isDesc) {
			return cmd, desc
		}
	}
	var b bytes.Buffer
	if json.Indent(&b, in, "", "  ") != nil {
		return string(in), ""
	}
	return b.String(), ""
}

// resultText is a tool result's text: a string, or its text blocks.
func resultText(c json.RawMessage) string {
	var s string
	if json.Unmarshal(c, &s) == nil {
		return s
	}
	var bs []block
	if json.Unmarshal(c, &bs) != nil {
		return string(c)
	}
	var parts []string
	for _, b := range bs {
		switch b.Type {
		case "text":
			parts = append(parts, b.Text)
		case "image":
			parts = append(parts, "[image]")
		}
	}
	return strings.Join(parts, "\n")
}

func clipShown(s string) string {
	if len(s) <= maxShown {
		return s
	}
	cut := maxShown
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n… %d more bytes not shown", len(s)-cut)
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
