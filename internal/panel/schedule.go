package panel

import (
	"fmt"
	"strings"
)

// nextSchedule is the panel's line for the server's next scheduled prompt
// (/schedule), or "".
func (p *Panel) nextSchedule(server string) string {
	if p.Registry == nil || p.Registry.Schedules == nil {
		return ""
	}
	all, err := p.Registry.Schedules.List()
	if err != nil {
		return ""
	}
	first, n := "", 0
	for id, s := range all {
		if s.Server != server {
			continue
		}
		n++
		if first == "" || s.Next.Before(all[first].Next) || (s.Next.Equal(all[first].Next) && id < first) {
			first = id
		}
	}
	if n == 0 {
		return ""
	}
	s := all[first]
	prompt := strings.Join(strings.Fields(s.Prompt), " ")
	if r := []rune(prompt); len(r) > 60 {
		prompt = string(r[:60]) + "…"
	}
	more := ""
	if n > 1 {
		more = fmt.Sprintf(" (%d scheduled; /schedules lists them)", n)
	}
	return fmt.Sprintf("⏰ next schedule <t:%d:R> in <#%s>: %s%s", s.Next.Unix(), s.ChannelID, prompt, more)
}
