package approval

import (
	"strings"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/state"
)

// keysNote ends the pending card of a request answered by keys in Codex's
// own dialog (state.Request.Keys): what Always is there, in Codex's terms
// (agents.md §1.4: option 2 of the dialog writes a prefix rule Codex keeps
// in its machine-wide rules file; the prefix is Codex's, often the command's first
// word), and that the terminal answers too.
const keysNote = "\n-# The terminal shows the same question; whichever answers first wins. " +
	"**Always** is Codex's own \"don't ask again for commands that start with …\": Codex picks the prefix " +
	"(it may be just the command's first word) and keeps it in ~/.codex/rules/default.rules for good, for every project on this machine; " +
	"the card names it once pressed, and refuses a prefix that is only a shell or an interpreter. " +
	"**Deny** is Codex's No, which ends the turn."

// keysAlways is the Always of a request answered by keys: the dialog's
// "don't ask again" choice. The exact prefix is on Codex's screen only;
// the daemon adds it to the outcome when it presses the key.
func keysAlways(req *state.Request, user string) error {
	req.Always = true
	return decide(req, claudehook.Decision{Behavior: "allow"}, "✅ **Allowed**, and Codex will not ask again for "+likeThis+", by "+user)
}

// likeThis is Always's scope in its outcome until the prefix is known.
const likeThis = "commands that start like this one"

// KeysAlwaysScope is an Always outcome naming the prefix Codex showed.
func KeysAlwaysScope(outcome, prefix string) string {
	return strings.Replace(outcome, likeThis, "commands that start with "+inlineCode(prefix), 1)
}

// keysButtons are a keyed request's Allow and Always.
func keysButtons(instance, id string) []chat.Button {
	return []chat.Button{
		{Label: "Allow", CustomID: cid(instance, id, "allow"), Style: chat.Success},
		{Label: "Always", CustomID: cid(instance, id, "always"), Style: chat.Primary},
	}
}

// agentOf is who a card's modal and outcomes name.
func agentOf(req state.Request) string {
	if req.Keys == "codex" {
		return "Codex"
	}
	return "Claude"
}
