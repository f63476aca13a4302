package hook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/redact"
	"github.com/ccbridge/ccbridge/internal/state"
)

// progress posts what Claude wrote before a tool call (each text block
// once), and a line for the call itself when the project asks for it. It
// runs in the posting run PreToolUse detaches (detach.go), so Claude never
// waits for Discord. It reads only the end of the transcript, again only
// when the file changes.
func (h *handler) progress(ctx context.Context, in *claudehook.Input, sess state.Session) error {
	level := progressLevel(sess)
	if level == "off" || in.TranscriptPath == "" || in.ToolUseID == "" {
		return nil
	}
	if level == progressLive {
		// The call shows as running at once; its text follows when the
		// transcript has it.
		if err := h.liveTool(ctx, in, sess, nil); err != nil {
			return err
		}
	}
	// The text goes before the turn's reply: its place in the channel's
	// order was taken while Claude waited for the hook (or is taken now,
	// before the transcript is read), so the turn's Stop waits for it.
	pl := place{release: func() {}}
	if level != progressLive {
		pl = h.holdPlace(ctx, sess) // post.go
	}
	defer pl.release()
	var parts []string
	var msgID string
	var blocks []claudehook.IndexedText
	err := awaitTranscript(ctx, in.TranscriptPath, func() (bool, error) {
		var found bool
		var err error
		msgID, blocks, found, err = textBefore(in) // codex.go
		return found, err
	})
	if err != nil && !errors.Is(err, errTranscriptBehind) {
		return err
	}
	if err == nil {
		for _, b := range blocks {
			key := state.TurnKey(in.SessionID, fmt.Sprintf("%s-%d", msgID, b.Index))
			created, err := h.store.Seen.Create(ctx, key, state.Seen{At: time.Now().UTC()})
			if err != nil {
				return err
			}
			if created {
				parts = append(parts, strings.TrimSpace(b.Text))
			}
		}
	}
	if level == progressLive {
		if len(parts) == 0 {
			return nil
		}
		return h.liveTool(ctx, in, sess, parts) // live.go
	}
	if level == "tools" {
		parts = append(parts, toolLine(in))
	}
	text := strings.Join(parts, "\n\n")
	if text == "" {
		return nil
	}
	var msgs []outgoing
	for _, c := range h.chunks(sess.Server, text) {
		msgs = append(msgs, outgoing{content: c})
	}
	_, err = h.deliverAt(ctx, sess, msgs, pl.order, 0)
	return err
}

// progressLevel is the session's progress setting, "text" unless set.
func progressLevel(sess state.Session) string {
	if sess.Progress == "" {
		return "text"
	}
	return sess.Progress
}

// toolLine is a compact description of a tool call.
func toolLine(in *claudehook.Input) string {
	var detail string
	var fields map[string]any
	_ = json.Unmarshal(in.ToolInput, &fields)
	for _, k := range []string{"command", "file_path", "pattern", "url", "description"} {
		if v, ok := fields[k].(string); ok && v != "" {
			detail = v
			break
		}
	}
	// Masked before it is cut: a cut secret is no longer recognised.
	detail = strings.ReplaceAll(strings.ReplaceAll(redact.String(detail), "\n", " "), "`", "ʼ")
	if r := []rune(detail); len(r) > 180 {
		detail = string(r[:180]) + "…"
	}
	if detail == "" {
		return "🔧 " + in.ToolName
	}
	return "🔧 " + in.ToolName + " `" + detail + "`"
}
