//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
)

// The slash commands as a phone shows them: /model suggests models as the
// owner types (answered within Discord's 3 s, at most 25), /mode offers
// only the modes a running session can switch to, /audit takes a number
// from 1 to 50, and /help lists every command.
func TestCommandsSuggestAndList(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	ac := b.srv.Autocomplete(p.channel, "model", b.owner, nil, "name", "son")
	r := b.srv.WaitResponse(ac, 5*time.Second)
	if r.Late || r.ResponseType != 8 {
		t.Fatalf("autocomplete answered late (%v) or with type %d", r.Late, r.ResponseType)
	}
	var values []string
	for _, c := range r.Choices() {
		values = append(values, c["value"].(string))
	}
	if len(values) == 0 || len(values) > 25 || values[0] != "sonnet" {
		t.Fatalf("suggestions for son: %q", values)
	}
	for _, cmd := range b.srv.Commands(p.bot.GuildID) {
		if cmd["name"] != "mode" {
			continue
		}
		var got []string
		for _, c := range cmd["options"].([]any)[0].(map[string]any)["choices"].([]any) {
			got = append(got, c.(map[string]any)["value"].(string))
		}
		if strings.Join(got, " ") != "default acceptEdits plan auto" {
			t.Errorf("/mode offers %q", got)
		}
	}
	it := b.srv.Command(p.channel, "audit", b.owner, map[string]any{"count": 3})
	b.srv.WaitResponse(it, 5*time.Second)
	help := b.srv.Command(p.channel, "help", b.owner, nil)
	b.srv.WaitResponse(help, 5*time.Second)
	m := b.srv.WaitMessage(long, "the /help answer", func(m *fakediscord.Message) bool {
		return m.ChannelID == p.channel && strings.Contains(m.Content, "**ccbridge commands**")
	})
	for _, name := range []string{"/status", "/model", "/audit", "/sessions", "/diff", "/help"} {
		if !strings.Contains(m.Content, "`"+name+"`") {
			t.Errorf("/help lacks %s:\n%s", name, m.Content)
		}
	}
}
