package hook

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/state"
)

// deliveredWindow is how old a prompt the daemon typed from Discord may be
// and still be matched to a UserPromptSubmit: delivery takes seconds; a
// prompt queued behind a long turn is submitted at once all the same
// (UserPromptSubmit fires when the text is submitted, §5).
const deliveredWindow = 10 * time.Minute

// turnStartKey names the Seen record of when a turn's prompt was submitted.
func turnStartKey(sid, pid string) string { return state.TurnKey(sid, pid) + ".start" }

// promptSubmitted runs on UserPromptSubmit: it notes when the turn began
// (for the long-turn ping) and mirrors a prompt typed at the terminal to
// the channel, queued in the outbox so it goes out before Claude's reply
// and never keeps Claude waiting on Discord.
func (h *handler) promptSubmitted(ctx context.Context, in *claudehook.Input, sess state.Session) error {
	if in.SessionID != "" && in.PromptID != "" {
		if _, err := h.store.Seen.Create(ctx, turnStartKey(in.SessionID, in.PromptID), state.Seen{At: time.Now().UTC()}); err != nil {
			h.log.Warn("turn start not recorded", "err", err)
		}
	}
	if sess.Channel() == "" || internalPrompt(in.Prompt) || strings.TrimSpace(in.Prompt) == "" {
		return nil
	}
	prefs, _ := h.prefs(sess)
	if !prefs.MirrorTerminal {
		return nil
	}
	ext, err := h.extras()
	if err != nil {
		return err
	}
	fromDiscord := false
	if h.route == nil { // a hand-started session gets nothing from Discord
		if _, err := ext.Delivered.Update(ctx, h.session, func(d *state.Delivered) error {
			fromDiscord = d.Take(in.Prompt, time.Now(), deliveredWindow)
			return nil
		}); err != nil {
			return err
		}
	}
	if fromDiscord {
		return nil
	}
	var msgs []outgoing
	for _, c := range h.chunks(sess.Server, terminalPromptText(in.Prompt)) {
		msgs = append(msgs, outgoing{content: c})
	}
	h.log.Info("mirroring a prompt typed at the terminal", "chars", len(in.Prompt))
	return h.enqueue(ctx, sess, msgs, "")
}

// terminalPromptText marks a prompt as typed at the terminal and quotes
// it. Mentions in it stay inert: everything relayed goes out with
// allowed_mentions parse [].
func terminalPromptText(prompt string) string {
	lines := strings.Split(strings.TrimSpace(prompt), "\n")
	for i, l := range lines {
		lines[i] = "> " + l
	}
	return "⌨️ **Typed at the terminal:**\n" + strings.Join(lines, "\n")
}

// internalPrompt reports whether a UserPromptSubmit carries one of
// Claude's own prompts rather than a person's: a background task's
// notification, or the wrappers of a local slash command (docs §1.4, §11).
func internalPrompt(p string) bool {
	p = strings.TrimSpace(p)
	if strings.HasPrefix(p, "<task-notification>") {
		return true
	}
	for _, tag := range []string{"<command-name>", "<local-command-caveat>", "<local-command-stdout>", "<command-message>"} {
		if strings.Contains(p, tag) {
			return true
		}
	}
	return false
}

// sessionStarted announces a Claude session that starts afresh where one
// ran before (/clear, a restart after a crash) or is resumed, in one line
// with the new Claude session id, so nobody talks into a lost context
// unaware. The first start of a session and /compact are not announced.
func (h *handler) sessionStarted(ctx context.Context, in *claudehook.Input, before, sess state.Session) error {
	if sess.Channel() == "" || in.SessionID == "" {
		return nil
	}
	var text string
	name := agentName(in) // codex.go
	switch {
	case in.Source == "clear":
		text = "🆕 Context cleared: new " + name + " session `" + in.SessionID + "`."
	case in.Source == "resume":
		text = "↩️ Resumed " + name + " session `" + in.SessionID + "`."
	case in.Source == "startup" && before.ClaudeSessionID != "" && before.ClaudeSessionID != in.SessionID:
		text = "🆕 " + name + " started a fresh session `" + in.SessionID + "` (the previous one, `" + before.ClaudeSessionID + "`, is not continued)."
	default:
		return nil
	}
	// Once per Claude session and source: a repeated hook says nothing.
	created, err := h.store.Seen.Create(ctx, state.TurnKey(in.SessionID, "start-"+in.Source), state.Seen{At: time.Now().UTC()})
	if err != nil || !created {
		return err
	}
	return h.enqueue(ctx, sess, []outgoing{{content: text}}, "")
}

// notified runs on Notification. Claude's own notifications post nothing:
// permission_prompt marks the session as waiting on a person, for the
// daemon's attention pings (a dialog with no card, such as one the hook
// did not take, still brings the owner back); idle_prompt is noted only.
func (h *handler) notified(ctx context.Context, in *claudehook.Input, sess state.Session) error {
	if in.NotificationType != "permission_prompt" && in.NotificationType != "idle_prompt" {
		return nil
	}
	ext, err := h.extras()
	if err != nil {
		return err
	}
	_, err = ext.Waiting.Update(ctx, h.session, func(w *state.Waiting) error {
		*w = state.Waiting{Kind: in.NotificationType, Message: in.Message, ClaudeSessionID: in.SessionID, PromptID: in.PromptID, At: time.Now().UTC()}
		return nil
	})
	return err
}

// pingTimeout bounds posting an attention ping.
const pingTimeout = 5 * time.Second

// turnEnded mentions the owners when a turn that ran at least
// attention_turn ends, once per turn; short turns never ping.
func (h *handler) turnEnded(ctx context.Context, sess state.Session, turn state.Turn) error {
	prefs, owners := h.prefs(sess)
	if prefs.AttentionTurn <= 0 || len(owners) == 0 {
		return nil
	}
	start, err := h.store.Seen.Get(turnStartKey(turn.ClaudeSessionID, h.turnStartID(turn))) // codexcont.go
	if err != nil {
		return nil // the turn's start was not seen: no basis for a ping
	}
	took := turn.At.Sub(start.At)
	if took < prefs.AttentionTurn {
		return nil
	}
	created, err := h.store.Seen.Create(ctx, state.TurnKey(turn.ClaudeSessionID, turn.PromptID)+".ping", state.Seen{At: time.Now().UTC()})
	if err != nil || !created {
		return err
	}
	what := h.agentTitle() + " is done"
	if turn.Event == claudehook.EventStopFailure {
		what = h.agentTitle() + "'s turn failed"
	}
	return h.ping(ctx, sess, owners, fmt.Sprintf("%s (the turn ran %s).", what, took.Round(time.Second)))
}

// ping posts text after a mention of each owner, notifying exactly them.
func (h *handler) ping(ctx context.Context, sess state.Session, owners []string, text string) error {
	poster, _, err := h.poster(sess.Server)
	if err != nil {
		return fmt.Errorf("ping: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	_, err = poster.SendMentioning(ctx, sess.Channel(), "", Mentions(owners)+" "+text, owners)
	if errors.Is(err, context.DeadlineExceeded) {
		h.log.Warn("attention ping not posted in time", "err", err)
	}
	return err
}

// Mentions writes <@id> for each id.
func Mentions(ids []string) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = "<@" + id + ">"
	}
	return strings.Join(parts, " ")
}
