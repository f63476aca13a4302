package router

import "github.com/ccbridge/ccbridge/internal/chat"

// startingEmoji marks a message taken for a session that must start first:
// Claude takes seconds to come up, and the phone should not see silence
// until then (✅ still comes on delivery).
const startingEmoji = "👀"

// markStarting reacts to the message when its session is not running, so
// before Ensure starts it. A status that cannot be read marks nothing.
func (r *Router) markStarting(key string, ev chat.MessageEvent) {
	if st, err := r.opt.Sessions.Status(r.ctx, key); err == nil && st.State == "stopped" {
		r.react(ev, startingEmoji)
	}
}
