//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/testutil/claudetest"
	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
	"github.com/ccbridge/ccbridge/internal/testutil/fakemodel"
	"github.com/ccbridge/ccbridge/internal/testutil/faketelegram"
)

// newTwoFrontEnds is one daemon serving a Discord bot (project "web", its
// channel) and a Telegram bot (project "api", its forum topic), side by
// side, each with its own folder, the product's defaults.
func newTwoFrontEnds(t *testing.T) (*tgBridge, *project) {
	t.Helper()
	claude := claudetest.Binary(t)
	b := &bridge{t: t, srv: fakediscord.New(t), model: fakemodel.New(t)}
	b.owner = b.srv.NewUser("owner")
	tb := &tgBridge{bridge: b, tg: faketelegram.New(t), key: "phone-api"}
	tb.topic = tb.tg.AddTopic("api").MessageThreadID
	base := b.newTmux()
	bot := b.srv.Main()
	p := &project{bot: bot, name: "web", dir: filepath.Join(base, "home-web"), channel: bot.ChannelID, key: bot.Name + "-web"}
	tb.dir = filepath.Join(base, "phone-api")
	for _, d := range []string{p.dir, tb.dir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	b.projects = []*project{p}
	home := claudeHomeIn(t, base, p.dir, tb.dir)
	var env []string
	for k, v := range claudetest.Env(home, b.model.URL) {
		env = append(env, fmt.Sprintf("%s = %q", k, v))
	}
	b.env = []string{"CCBRIDGE_E2E_TOKEN_0=" + bot.Token, "CCBRIDGE_E2E_TG=" + tb.tg.Token}
	cfg := fmt.Sprintf("[discord]\napi_base = %q\n[telegram]\napi_base = %q\n[tmux]\nsocket = %q\n[claude]\ncommand = %q\npermission_mode = \"default\"\nenv = { %s }\n"+
		"[[servers]]\nname = %q\ntoken_env = \"CCBRIDGE_E2E_TOKEN_0\"\nguild_id = %q\nowner_ids = [%q]\n"+
		"  [[servers.projects]]\n  name = \"web\"\n  channel_id = %q\n  path = %q\n"+
		"[[servers]]\nname = \"phone\"\nplatform = \"telegram\"\ntoken_env = \"CCBRIDGE_E2E_TG\"\nchat_id = \"%d\"\nowner_ids = [\"%d\"]\n"+
		"  [[servers.projects]]\n  name = \"api\"\n  topic_id = \"%d\"\n  path = %q\n",
		b.srv.URL, tb.tg.URL, b.socket, claude, strings.Join(env, ", "),
		bot.Name, bot.GuildID, b.owner.ID, p.channel, p.dir,
		tb.tg.ChatID, tb.tg.Owner.ID, tb.topic, tb.dir)
	b.configure(base, cfg)
	tb.start()
	return tb, p
}

// Issue 27 §3: one daemon runs a Discord and a Telegram server side by
// side. Each session belongs to the place that started it (its replies go
// there and nowhere else), each front end's /sessions lists its own, and
// MCP's claude_list shows both.
func TestDiscordAndTelegramSideBySide(t *testing.T) {
	t.Parallel()
	tb, web := newTwoFrontEnds(t)
	b := tb.bridge
	b.say(web, "hello from Discord")
	tb.say("hello from Telegram")
	b.waitReply(web, "ok: hello from Discord")
	tb.waitReply("ok: hello from Telegram")
	time.Sleep(time.Second) // a reply sent to the wrong place would be there now
	for _, c := range b.contents(web.channel) {
		if strings.Contains(c, "from Telegram") {
			t.Errorf("the Telegram session's reply reached Discord: %q", c)
		}
	}
	for _, m := range tb.tg.Messages(tb.tg.ChatID, 0) {
		if strings.Contains(m.Text, "from Discord") {
			t.Errorf("the Discord session's reply reached Telegram: %q", m.Text)
		}
	}
	if n := len(b.panes()); n != 2 {
		t.Errorf("%d panes, want one per front end's session", n)
	}

	b.command(web, "sessions", nil, "hello from Discord")
	tb.say("/sessions")
	list, ok := tb.tg.WaitMessage(long, func(m faketelegram.Message) bool {
		return m.From != nil && m.From.IsBot && strings.Contains(m.Text, "hello from Telegram")
	})
	if !ok {
		t.Fatal("Telegram's /sessions never listed its session")
	}
	if strings.Contains(list.Text, "from Discord") {
		t.Errorf("Telegram's /sessions lists the Discord project's session: %q", list.Text)
	}

	e := mcpWithBridge(t, b, nil)
	var got struct {
		Sessions []struct {
			WorkingDirectory string `json:"workingDirectory"`
			FirstPrompt      string `json:"firstPrompt"`
			IsActive         bool   `json:"isActive"`
		} `json:"sessions"`
	}
	e.must("claude_list", map[string]any{}, &got)
	active := map[string]bool{}
	for _, s := range got.Sessions {
		if s.IsActive {
			active[s.WorkingDirectory+" "+s.FirstPrompt] = true
		}
	}
	for _, want := range []string{web.dir + " hello from Discord", tb.dir + " hello from Telegram"} {
		if !active[want] {
			t.Errorf("claude_list has no running session %q: %+v", want, got.Sessions)
		}
	}
}
