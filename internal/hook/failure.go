package hook

import (
	"strings"

	"github.com/ccbridge/ccbridge/internal/state"
)

// authError is StopFailure's error when Claude has no usable login or key
// (2.1.328: "Not logged in · Please run /login", or for a key the API
// refuses "Invalid API key · Fix external API key").
const authError = "authentication_failed"

// loginAdvice says what to do about it: /login is nothing the phone can
// do, so it names what to do on the machine.
const loginAdvice = "Claude cannot log in on the machine ccbridge runs on. There, as the user that runs ccbridge, run `claude` and " +
	"log in with `/login`, or set a valid `ANTHROPIC_API_KEY` in `[claude].env` and restart ccbridge. Then send your message again."

// failureText is what a turn that ended in StopFailure posts: the
// agent's error, its kind, and what to do when that is known.
func failureText(turn state.Turn, agent string) string {
	text := "⚠️ " + agent + "'s turn failed: " + strings.TrimSpace(turn.Reply)
	if turn.Error != "" && turn.Error != "unknown" {
		text += " (" + turn.Error + ")"
	}
	if turn.Error == authError {
		text += "\n" + loginAdvice
	}
	return text
}
