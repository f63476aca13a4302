package land

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ccbridge/ccbridge/internal/audit"
	"github.com/ccbridge/ccbridge/internal/chat"
)

// Audit answers /audit with the last count decisions of the log that in
// places where the command was run: the answer is public there, and the
// log, shared by every server and project of this machine, holds commands
// and paths that the people of another place may not see.
func (l Lander) Audit(count string, in func(audit.Entry) bool) chat.Reply {
	n := defaultAudit
	if v, err := strconv.Atoi(strings.TrimSpace(count)); err == nil && v > 0 {
		n = min(v, maxAudit)
	}
	if l.AuditDir == "" {
		return chat.Reply{Content: "No audit log."}
	}
	all, err := audit.Last(l.AuditDir, math.MaxInt)
	if err != nil {
		return chat.Reply{Content: "⚠️ " + chat.ErrText(err)}
	}
	var es []audit.Entry
	for i := len(all) - 1; i >= 0 && len(es) < n; i-- {
		if in(all[i]) {
			es = append(es, all[i])
		}
	}
	slices.Reverse(es)
	if len(es) == 0 {
		return chat.Reply{Content: "The audit log holds no decisions of this project."}
	}
	lines := make([]string, 0, len(es))
	for _, e := range es {
		who := e.Who
		if audit.Chat(e.From) && who != "" {
			who = chat.Mention(chat.User{ID: who})
		}
		line := fmt.Sprintf("`%s` **%s** %s · %s", e.At.Format("01-02 15:04:05"), e.Answer, e.From, chat.Clip(e.Asked, 120))
		if who != "" {
			line += " · " + who
		}
		if e.Rule != "" {
			line += " · rule `" + e.Rule + "`"
		}
		lines = append(lines, line)
	}
	// Newest last; drop the oldest until it fits.
	for len(lines) > 1 && utf8.RuneCountInString(strings.Join(lines, "\n"))+80 > chat.Limit {
		lines = lines[1:]
	}
	head := fmt.Sprintf("🧾 The last %d decision(s) in this project, newest last:\n", len(lines))
	return chat.Reply{Content: head + strings.Join(lines, "\n")}
}
