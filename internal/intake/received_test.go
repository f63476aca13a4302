package intake

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/state"
)

// pastedText is a message of five lines: Claude Code 2.1.328 wraps it in
// <pasted_content> when it is pasted (four lines or more, or over 800
// characters), in the UserPromptSubmit prompt and in the transcript.
const pastedText = "Please look at the failing build.\nThe error is in the parser module.\nIt started after yesterday's merge.\nCheck the tests in parser_test.go.\nThen tell me what you would change first, and why, in a few sentences, keeping it short and to the point please."

// The check of what Claude received before a crash finds a pasted message
// in its wrapper, in the prompt record and in the transcript, as the CLI
// wrote them (testdata captured from the pinned CLI): it is not typed twice
// (fidelity-3 D2).
func TestReceivedFindsAPastedPrompt(t *testing.T) {
	line, err := os.ReadFile(filepath.Join("testdata", "pasted-2.1.328.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var entry struct {
		Timestamp time.Time `json:"timestamp"`
		Message   struct {
			Content string `json:"content"`
		} `json:"message"`
	}
	if err := json.Unmarshal(line, &entry); err != nil {
		t.Fatal(err)
	}
	wrapped := entry.Message.Content
	if !strings.HasPrefix(wrapped, "\n\n<pasted_content id=\"") || !strings.Contains(wrapped, pastedText) {
		t.Fatalf("the captured prompt is not a wrapped paste: %q", wrapped)
	}
	typed := state.Typed{MessageID: "1300000000000000101", Session: "home-api", Text: pastedText, At: entry.Timestamp.Add(-time.Second)}
	for name, rec := range map[string]state.Session{
		"prompt record": {Prompts: []state.Prompt{{At: entry.Timestamp, Text: wrapped}}},
		"transcript":    {TranscriptPath: filepath.Join("testdata", "pasted-2.1.328.jsonl")},
	} {
		t.Run(name, func(t *testing.T) {
			if got, err := Received(rec, typed); got != ReceiptSeen {
				t.Fatalf("Received = %d, %v; want ReceiptSeen", got, err)
			}
		})
	}
}

// Discord may name the bot's ⚠️ with or without its variation selector
// (U+FE0F): either says handled (fidelity-3 P8).
func TestHandledMarkIgnoresTheVariationSelector(t *testing.T) {
	for _, marked := range [][]string{{"✅"}, {"⚠️"}, {"\u26a0"}, {"✅\ufe0f"}} {
		if !HandledMark(marked) {
			t.Errorf("HandledMark(%q) = false", marked)
		}
	}
	if HandledMark([]string{"⏳", "👍"}) {
		t.Error("another reaction says handled")
	}
}
