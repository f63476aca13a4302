package panel

import (
	"time"

	"github.com/ccbridge/ccbridge/internal/state"
)

// figures is what a project line of the panel shows of its session's last
// statusLine: the context used and the plan's limits (" · ctx 42% · 5h 45%
// · 7d 12%"), or nothing when Claude has reported none.
func (p *Panel) figures(key string) string {
	sess, err := p.Store.Sessions.Get(key)
	if err != nil || sess.ClaudeSessionID == "" {
		return ""
	}
	statuses, err := state.OpenStatuses(p.Store.Dir)
	if err != nil {
		return ""
	}
	st, err := statuses.Get(sess.ClaudeSessionID)
	if err != nil {
		return ""
	}
	// The model and cost belong to /usage; the panel keeps to what runs out.
	st.Model, st.CostUSD = "", 0
	if s := st.Summary(time.Now()); s != "" {
		return " · " + s
	}
	return ""
}
