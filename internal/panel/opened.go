package panel

import (
	"context"
	"fmt"
	"strings"

	"github.com/ccbridge/ccbridge/internal/opened"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
)

// opened is the panel's lines for the server's folders opened with /open:
// each one's thread, folder and session. A private one (Telegram's, a
// topic of its owner's private chat) is shown without its thread or
// folder: every member of the group reads the panel.
func (p *Panel) opened(ctx context.Context, server string, private bool, reqs map[string]state.Request) string {
	if p.Registry == nil || p.Registry.Opened == nil {
		return ""
	}
	open := opened.Folders(p.Registry, server)
	if len(open) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\n**Opened folders** (/open)")
	for _, o := range open {
		key := session.ThreadKey(server, session.OpenedProject, o.ThreadID)
		st, _ := p.Sessions.Status(ctx, key)
		if private {
			fmt.Fprintf(&b, "\n%s: a folder open in a private chat", icon(st.State))
		} else {
			fmt.Fprintf(&b, "\n%s <#%s> `%s`", icon(st.State), o.ThreadID, o.Path)
		}
		b.WriteString(p.figures(key))
		if n := pending(reqs, key); n > 0 {
			fmt.Fprintf(&b, " · %d prompt(s) waiting", n)
		}
	}
	return b.String()
}
