package intake

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/state"
)

// Receipt is what Claude is known to have received of a message typed
// before ccbridge stopped: catch-up types it again only when it got none.
type Receipt int

// What Claude is known to have received of a typed message.
const (
	ReceiptNone Receipt = iota
	ReceiptSeen
	ReceiptUnknown
)

// Received tells whether Claude got a message typed before ccbridge
// stopped, from the session's record: its UserPromptSubmit record (the
// receipt ccbridge waits for), else the session's transcript. A
// transcript that cannot be read says ReceiptUnknown, with the error.
func Received(rec state.Session, t state.Typed) (Receipt, error) {
	want := promptKey(t.Text)
	for _, p := range rec.Prompts {
		if p.NotBefore(t.At) && strings.Contains(promptText(p.Text), want) {
			return ReceiptSeen, nil
		}
	}
	if rec.TranscriptPath == "" {
		return ReceiptNone, nil // Claude never said anything: it got nothing
	}
	found, err := transcriptHas(rec.TranscriptPath, t.At, want)
	switch {
	case err != nil:
		return ReceiptUnknown, err
	case found:
		return ReceiptSeen, nil
	}
	return ReceiptNone, nil
}

// promptText is a prompt as it is compared with what Claude recorded:
// control characters dropped (as tmux.Sanitize does before the paste),
// whitespace folded (Claude re-wraps).
func promptText(s string) string {
	s = strings.Map(func(c rune) rune {
		if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f || c >= 0x80 && c <= 0x9f {
			return -1
		}
		return c
	}, strings.ToValidUTF8(s, "\uFFFD"))
	return strings.Join(strings.Fields(s), " ")
}

// promptKey is what is looked for: the first 200 bytes of promptText.
// Only it is cut, never what it is looked for in (as session.WaitReceipt):
// Claude records a paste of four lines or more, or over 800 characters,
// inside a <pasted_content id="…"> wrapper, whose tag would push the text
// out of a cut record.
func promptKey(s string) string {
	s = promptText(s)
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[:200], "")
	}
	return s
}

// transcriptTail is how much of a transcript's end is read: a prompt typed
// just before a crash is among its last lines.
const transcriptTail = 1 << 20

// transcriptHas reports whether a user prompt holding want was written to
// the transcript at or after since.
func transcriptHas(path string, since time.Time, want string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, fmt.Errorf("open transcript: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > transcriptTail {
		if _, err := f.Seek(fi.Size()-transcriptTail, io.SeekStart); err != nil {
			return false, fmt.Errorf("read transcript: %w", err)
		}
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), transcriptTail)
	since = since.Add(-time.Second) // Claude's clock stamps the line a moment after ours
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.Contains(line, []byte(`"user"`)) {
			continue
		}
		var e struct {
			claudehook.Entry
			Timestamp time.Time `json:"timestamp"`
		}
		if json.Unmarshal(line, &e) != nil || e.Type != "user" || e.IsSidechain || e.Timestamp.Before(since) {
			continue
		}
		for _, b := range e.Blocks() {
			if b.Type == "text" && strings.Contains(promptText(b.Text), want) {
				return true, nil
			}
		}
	}
	if err := sc.Err(); err != nil {
		return false, fmt.Errorf("read transcript: %w", err)
	}
	return false, nil
}

// HandledMark reports whether the bot's own reactions say a message was
// handled: ✅ (delivered) or ⚠️ (told why not, or offered).
func HandledMark(marked []string) bool {
	return HasMark(marked, "✅") || HasMark(marked, "⚠️")
}

// HasMark reports whether marked holds emoji. Names are compared without
// U+FE0F: Discord does not always keep the variation selector the bot
// reacted with.
func HasMark(marked []string, emoji string) bool {
	emoji = strings.ReplaceAll(emoji, "\ufe0f", "")
	return slices.ContainsFunc(marked, func(name string) bool { return strings.ReplaceAll(name, "\ufe0f", "") == emoji })
}
