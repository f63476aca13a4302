package hook

import (
	"context"
	"fmt"
	"strings"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/state"
)

// A reply does not wait for the transcript. Claude Code 2.1.328 writes the
// final message to its transcript some 60 ms after it fires Stop (make
// bench: most of what a reply took), and the Stop payload's
// last_assistant_message, its last text block, is the whole reply when the
// message is one text block, as most are. So the reply goes out at once
// as last_assistant_message, and its hook, still holding the turn's place
// in the channel's order, then waits for the transcript: earlier blocks
// found there are edited in (and parts that no longer fit posted after
// it), as is a footer whose figures the final message changed.

// completeReply waits for the turn's final message in the transcript and
// makes the posted reply (c, posted as ids at order) all of it. It returns
// the reply as it now stands in Discord.
func (h *handler) completeReply(ctx context.Context, sess state.Session, turn *state.Turn, in *claudehook.Input, order string, c composed, ids []string) (composed, []string) {
	full, err := h.finalText(ctx, in)
	h.tr.mark("final")
	if err != nil {
		h.log.Warn("final message not in the transcript; the reply stays last_assistant_message", "err", err)
		return c, ids
	}
	if full == turn.Reply {
		return h.refreshFooter(ctx, sess, *turn, c, ids), ids
	}
	last := turn.Reply
	turn.Reply = full
	// Not the hook's context: the reply is out, its record must say so.
	if _, err := h.store.Turns.Update(context.WithoutCancel(ctx), state.TurnKey(turn.ClaudeSessionID, turn.PromptID), func(t *state.Turn) error {
		t.Reply = full
		return nil
	}); err != nil {
		h.log.Warn("turn record keeps the last block only", "err", err)
	}
	if editable(c, ids, full) {
		next, err := h.composeReply(sess, *turn, full, true)
		if err == nil && len(next.msgs) >= len(c.msgs) {
			return next, h.editIn(ctx, sess, order, c, ids, next)
		}
	}
	// Files, a part queued or refused: what was posted stays, and the
	// blocks before it follow, in the reply's place.
	earlier := strings.TrimSpace(strings.TrimSuffix(full, last))
	more, err := h.composeReply(sess, *turn, earlier+"\n-# ↑ the beginning of the reply above", false)
	if err != nil {
		h.log.Error("the reply's first blocks not posted", "err", err)
		return c, ids
	}
	if _, err := h.deliverAt(ctx, sess, more.msgs, order, len(c.msgs)); err != nil {
		h.log.Error("the reply's first blocks not posted", "err", err)
	} else {
		h.log.Info("the reply's first blocks posted after it", "messages", len(more.msgs))
	}
	return c, ids
}

// finalText waits for the turn's final message in the transcript and
// returns every text block of it.
func (h *handler) finalText(ctx context.Context, in *claudehook.Input) (string, error) {
	var text string
	err := awaitTranscript(ctx, in.TranscriptPath, func() (bool, error) {
		t, found, err := h.transcriptReply(in) // codex.go
		text = t
		return found, err
	})
	return text, err
}

// editable reports whether the posted reply c can be edited into full:
// every part posted, and no files on either side (an edit keeps a
// message's files where they are).
func editable(c composed, ids []string, full string) bool {
	for i, m := range c.msgs {
		if i >= len(ids) || ids[i] == "" || len(m.files) > 0 {
			return false
		}
	}
	_, names := chat.AttachMarkers(full)
	return len(names) == 0
}

// editIn edits the posted parts of a reply into the first parts of next
// and posts the parts that are left, in the reply's place; it returns the
// ids of next's parts.
func (h *handler) editIn(ctx context.Context, sess state.Session, order string, c composed, ids []string, next composed) []string {
	out := append([]string(nil), ids...)
	poster, _, err := h.poster(sess.Server)
	if err != nil {
		h.log.Warn("reply not completed", "err", err)
		return out
	}
	for i := range c.msgs {
		if c.msgs[i].content == next.msgs[i].content {
			continue
		}
		ectx, cancel := context.WithTimeout(ctx, editTimeout)
		err := poster.Edit(ectx, sess.Channel(), ids[i], chat.Message{Content: next.msgs[i].content})
		cancel()
		if err != nil {
			h.log.Warn("reply part not completed", "part", i+1, "err", err)
			continue
		}
		h.log.Info("reply part completed from the transcript", "message", ids[i], "part", i+1)
	}
	if rest := next.msgs[len(c.msgs):]; len(rest) > 0 {
		more, err := h.deliverAt(ctx, sess, rest, order, len(c.msgs))
		if err != nil {
			h.log.Error("the rest of the reply not posted", "err", err)
		}
		out = append(out, more...)
	}
	return out
}

// refreshFooter edits the footer of a reply posted before the transcript
// held its final message: the model and context come from there.
func (h *handler) refreshFooter(ctx context.Context, sess state.Session, turn state.Turn, c composed, ids []string) composed {
	last := c.chunks - 1
	if last < 0 || last >= len(ids) || ids[last] == "" {
		return c
	}
	if prefs, _ := h.prefs(sess); !prefs.Footer {
		return c
	}
	footer, own := h.footer(sess, turn)
	switch {
	case footer == c.footer:
		c.own = own
		return c
	case !own && h.route == nil:
		// Not the turn's own figures either: its statusLine edits those
		// in (awaitFigures), one edit rather than two.
		c.own = false
		return c
	}
	content := c.msgs[last].content
	switch {
	case c.footer != "" && strings.HasSuffix(content, c.footer):
		content = strings.TrimSuffix(content, c.footer) + footer
	case c.footer == "":
		content += "\n" + footer
	default:
		return c
	}
	if len([]rune(content)) > h.limit(sess.Server) {
		return c
	}
	poster, _, err := h.poster(sess.Server)
	if err != nil {
		h.log.Warn("footer not refreshed", "err", err)
		return c
	}
	ectx, cancel := context.WithTimeout(ctx, editTimeout)
	defer cancel()
	if err := poster.Edit(ectx, sess.Channel(), ids[last], chat.Message{Content: content}); err != nil {
		h.log.Warn("footer not refreshed", "err", fmt.Errorf("edit: %w", err))
		return c
	}
	c.msgs = append([]outgoing(nil), c.msgs...)
	c.msgs[last].content, c.footer, c.own = content, footer, own
	return c
}
