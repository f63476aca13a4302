package usage

import (
	"time"

	"github.com/ccbridge/ccbridge/internal/state"
)

// What an armed Continue at reset offer becomes once its limit resets:
// the daemon types Prompt into the session, unless it went on by itself,
// and says which in the offer's channel.

// Prompt is what is typed at the reset.
const Prompt = "continue"

// What the offer's channel is told at the reset.
const (
	SentText   = "▶️ The usage limit has reset: sent \"continue\" to Claude."
	WentOnText = "▶️ The usage limit has reset; Claude has gone on already, so ccbridge sent nothing."
)

// NotSentText says "continue" could not be typed, with the whole failure
// (the poster cuts a long one into messages).
func NotSentText(err error) string {
	return "⚠️ The usage limit has reset, but ccbridge could not send \"continue\": " + err.Error()
}

// Due reports whether res is armed and its limit has reset by now.
func Due(res state.Resume, now time.Time) bool { return res.Armed && !now.Before(res.At) }

// WentOn reports whether the session went on since the turn the limit
// stopped: a prompt submitted since (lastPromptID, the session's latest)
// means Claude Code continued by itself at the reset (claude.ai plans
// may), or someone did.
func WentOn(res state.Resume, lastPromptID string) bool {
	return res.PromptID != "" && lastPromptID != "" && lastPromptID != res.PromptID
}
