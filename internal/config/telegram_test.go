package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tgTOML is a Telegram server as issue 27 §2 shows it; {server} and
// {project} take extra keys, {dir} the project's folder.
const tgTOML = `
[[servers]]
name = "phone"
platform = "telegram"
token_env = "CCBRIDGE_TEST_TOKEN"
chat_id = "-1001234567890"
owner_ids = ["123456789"]
{server}
  [[servers.projects]]
  name = "api"
  topic_id = "42"
  path = "{dir}"
{project}
`

func tgConfig(t *testing.T, server, project string) string {
	t.Helper()
	t.Setenv("CCBRIDGE_TEST_TOKEN", "tok-0123456789")
	r := strings.NewReplacer("{server}", server, "{project}", project, "{dir}", t.TempDir())
	return r.Replace(tgTOML)
}

func parseTG(t *testing.T, server, project string) *Config {
	t.Helper()
	c, err := Parse(tgConfig(t, server, project))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A Telegram server checks out with no Discord key, and routes by the
// channel ids the rest of ccbridge knows: "<chat_id>" for the General
// topic, "<chat_id>.<topic_id>" for a project's topic.
func TestTelegramServerNormalised(t *testing.T) {
	c := parseTG(t, "", `
    [[servers.projects.threads]]
    topic_id = "77"
    name = "docs"`)
	if ps := c.Check(); len(ps) != 0 {
		t.Fatalf("a valid Telegram server has problems: %v", ps)
	}
	s := c.Servers[0]
	if !s.Telegram() || s.Platform != PlatformTelegram {
		t.Fatalf("Telegram() = %v, platform %q", s.Telegram(), s.Platform)
	}
	p := s.Projects[0]
	for name, got := range map[string][2]string{
		"general channel": {s.GeneralChannelID, "-1001234567890"},
		"project channel": {p.ChannelID, "-1001234567890.42"},
		"thread":          {p.Threads[0].ThreadID, "-1001234567890.77"},
		"chat_id kept":    {s.ChatID, "-1001234567890"},
		"topic_id kept":   {p.TopicID, "42"},
		"api_base":        {c.Telegram.APIBase, DefaultTelegramAPIBase},
		"guild":           {s.GuildID, ""},
	} {
		if got[0] != got[1] {
			t.Errorf("%s = %q, want %q", name, got[0], got[1])
		}
	}
	if got := TelegramChannelID("-100", "5"); got != "-100.5" {
		t.Errorf("TelegramChannelID = %q", got)
	}
}

// An existing config (no platform) is a Discord one, exactly as before.
func TestPlatformDefaultsToDiscord(t *testing.T) {
	c := parseValid(t)
	s := c.Servers[0]
	if s.Telegram() || s.Platform != PlatformDiscord {
		t.Fatalf("Telegram() = %v, platform %q", s.Telegram(), s.Platform)
	}
	if s.GeneralChannelID != "" || s.Projects[0].ChannelID != "100000000000000003" {
		t.Errorf("Discord ids changed: %q %q", s.GeneralChannelID, s.Projects[0].ChannelID)
	}
	if (Server{}).Telegram() {
		t.Error("a Server literal is a Telegram one")
	}
}

func TestTelegramAPIBase(t *testing.T) {
	base := tgConfig(t, "", "")
	c, err := Parse("[telegram]\napi_base = \"http://127.0.0.1:8081/\"\n" + base)
	if err != nil {
		t.Fatal(err)
	}
	if c.Telegram.APIBase != "http://127.0.0.1:8081" {
		t.Errorf("api_base = %q, want the trailing slash trimmed", c.Telegram.APIBase)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("valid api_base: %v", err)
	}
	for _, bad := range []string{"ftp://api.telegram.org", "api.telegram.org", "http:///bot"} {
		c, err := Parse("[telegram]\napi_base = \"" + bad + "\"\n" + base)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "telegram.api_base: \""+bad+"\" must be an http(s) URL") {
			t.Errorf("%s: got %v", bad, err)
		}
	}
}

// Every error (and warning) about the Telegram keys names its key and what
// is allowed instead.
func TestTelegramProblems(t *testing.T) {
	for _, tc := range []struct {
		name, server, project string
		want                  string
		warning               bool
	}{
		{name: "unknown platform", server: `platform = "slack"`,
			want: `servers[phone].platform: "slack" is not allowed; use one of discord, telegram`},
		{name: "no chat", server: `chat_id = ""`,
			want: "servers[phone].chat_id: missing; set it to the id of the Telegram group"},
		{name: "chat not a number", server: `chat_id = "my-group"`,
			want: `servers[phone].chat_id: "my-group" is not a Telegram chat id (an integer; a supergroup's starts with -100)`},
		{name: "chat zero", server: `chat_id = "0"`, want: `servers[phone].chat_id: "0" is not a Telegram chat id`},
		{name: "chat overflows", server: `chat_id = "-100123456789012345678"`, want: `servers[phone].chat_id: "-100123456789012345678" is not a Telegram chat id`},
		{name: "chat with a plus", server: `chat_id = "+100"`, want: `servers[phone].chat_id: "+100" is not a Telegram chat id`},
		{name: "basic group", server: `chat_id = "-4012345678"`, warning: true,
			want: "servers[phone].chat_id: -4012345678 is a basic group, which has no topics"},
		{name: "guild on telegram", server: `guild_id = "100000000000000001"`,
			want: "servers[phone].guild_id: guild_id is a Discord key; a Telegram server has chat_id"},
		{name: "panel channel on telegram", server: `general_channel_id = "100000000000000005"`,
			want: "servers[phone].general_channel_id: general_channel_id is a Discord key; a Telegram server's control panel is the General topic of its chat_id"},
		{name: "channel on telegram", project: `  channel_id = "100000000000000003"`,
			want: "servers[phone].projects[api].channel_id: channel_id is a Discord key; a Telegram project has topic_id"},
		{name: "thread id on telegram", project: "    [[servers.projects.threads]]\n    thread_id = \"100000000000000004\"",
			want: "servers[phone].projects[api].threads[0].thread_id: thread_id is a Discord key; a Telegram thread has topic_id"},
		{name: "thread without topic", project: "    [[servers.projects.threads]]\n    name = \"docs\"",
			want: "servers[phone].projects[api].threads[0].topic_id: missing; set it to the message_thread_id of the thread's forum topic"},
		{name: "no topic", project: `  topic_id = ""`,
			want: "servers[phone].projects[api].topic_id: missing; set it to the message_thread_id of the project's forum topic"},
		{name: "topic not a number", project: `  topic_id = "api"`,
			want: `servers[phone].projects[api].topic_id: "api" is not a topic id (a positive integer`},
		{name: "topic negative", project: `  topic_id = "-42"`, want: `servers[phone].projects[api].topic_id: "-42" is not a topic id`},
		{name: "topic zero", project: `  topic_id = "0"`, want: `servers[phone].projects[api].topic_id: "0" is not a topic id`},
		{name: "General topic", project: `  topic_id = "1"`,
			want: "servers[phone].projects[api].topic_id: 1 is the General topic, the server's control panel; give the project a topic of its own"},
		{name: "owner not a user id", server: `owner_ids = ["@me"]`,
			want: `servers[phone].owner_ids[0]: "@me" is not a Telegram user id (a positive integer`},
		{name: "owner negative", server: `owner_ids = ["-1001234567890"]`,
			want: `servers[phone].owner_ids[0]: "-1001234567890" is not a Telegram user id`},
		{name: "no owners", server: `owner_ids = []`,
			want: "servers[phone].owner_ids: empty; list the Telegram user ids allowed to drive sessions"},
		{name: "topic twice", project: "  [[servers.projects]]\n  name = \"web\"\n  topic_id = \"42\"\n  path = \"/tmp\"",
			want: "servers[phone].projects[web].topic_id: 42 is already used by servers[phone].projects[api].topic_id; a topic belongs to one project"},
		{name: "thread on a project's topic", project: "    [[servers.projects.threads]]\n    topic_id = \"42\"",
			want: "servers[phone].projects[api].threads[0].topic_id: 42 is already used by servers[phone].projects[api].topic_id"},
		{name: "chat twice", project: "[[servers]]\nname = \"phone2\"\nplatform = \"telegram\"\ntoken = \"x\"\nchat_id = \"-1001234567890\"\nowner_ids = [\"1\"]",
			want: "servers[phone2].chat_id: -1001234567890 is already used by servers[phone].chat_id; a chat belongs to one server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := tgConfig(t, tc.server, tc.project)
			if tc.server != "" {
				// A key given again in the block replaces the template's.
				key, _, _ := strings.Cut(tc.server, " ")
				text = dropFirstLine(text, key+" = ", tc.server)
			}
			if strings.HasPrefix(tc.project, "  topic_id") {
				text = dropFirstLine(text, "  topic_id = ", tc.project)
			}
			c, err := Parse(text)
			if err != nil {
				t.Fatal(err)
			}
			assertProblem(t, c.Check(), tc.want, tc.warning)
		})
	}
}

// dropFirstLine removes the first line starting with prefix that is not
// keep, so a case may replace a key of the template.
func dropFirstLine(text, prefix, keep string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, prefix) && l != keep {
			return strings.Join(append(lines[:i:i], lines[i+1:]...), "\n")
		}
	}
	return text
}

func assertProblem(t *testing.T, ps []Problem, want string, warning bool) {
	t.Helper()
	var all []string
	for _, p := range ps {
		if strings.Contains(p.Error(), want) {
			if p.Warning != warning {
				t.Errorf("%q: warning = %v, want %v", p, p.Warning, warning)
			}
			return
		}
		all = append(all, p.Error())
	}
	t.Errorf("no problem %q; got:\n%s", want, strings.Join(all, "\n"))
}

// The reverse: a Telegram key on a Discord server is an error that says so,
// and none of the Telegram checks run there.
func TestTelegramKeysOnADiscordServer(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"chat", strings.Replace(validTOML, "guild_id", "chat_id = \"-1001234567890\"\nguild_id", 1),
			"servers[home].chat_id: chat_id is a Telegram key; a Discord server has guild_id (a Telegram server says platform = \"telegram\")"},
		{"topic", strings.Replace(validTOML, "  channel_id", "  topic_id = \"42\"\n  channel_id", 1),
			"servers[home].projects[api].topic_id: topic_id is a Telegram key; a Discord project has channel_id"},
		{"thread topic", validTOML + "    [[servers.projects.threads]]\n    thread_id = \"100000000000000004\"\n    topic_id = \"42\"\n",
			"servers[home].projects[api].threads[0].topic_id: topic_id is a Telegram key; a Discord thread has thread_id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("CCBRIDGE_TEST_TOKEN", "tok-0123456789")
			c, err := Parse(strings.ReplaceAll(tc.text, "%s", t.TempDir()))
			if err != nil {
				t.Fatal(err)
			}
			ps := c.Check()
			assertProblem(t, ps, tc.want, false)
			if len(ps) != 1 {
				t.Errorf("want only that problem, got %v", ps)
			}
		})
	}
}

// An id written as a TOML integer (Telegram shows them as numbers) is
// reported with the quoted form to write instead.
func TestUnquotedTelegramIDs(t *testing.T) {
	text := strings.NewReplacer(`chat_id = "-1001234567890"`, `chat_id = -1001234567890`, `topic_id = "42"`, `topic_id = 42`).
		Replace(tgConfig(t, "", ""))
	path := filepath.Join(t.TempDir(), "c.toml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	_, problems, err := LoadAll(path)
	if err != nil {
		t.Fatal(err)
	}
	assertProblem(t, problems, `servers[phone].chat_id: must be a quoted id, e.g. "-1001234567890"`, false)
	assertProblem(t, problems, `servers[phone].projects[api].topic_id: must be a quoted id, e.g. "42"`, false)
}

// config check's summary shows a Telegram server by its own keys.
func TestSummaryTelegram(t *testing.T) {
	c := parseTG(t, "", "")
	var b strings.Builder
	c.WriteSummary(&b)
	out := b.String()
	for _, want := range []string{
		"telegram:    https://api.telegram.org\n",
		"server phone:  telegram chat -1001234567890, token $CCBRIDGE_TEST_TOKEN (…6789), 1 owner(s), tmux session ccbridge-phone, panel in the General topic",
		"  project api: topic 42 → ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "guild") || strings.Contains(out, "channel -100") {
		t.Errorf("summary speaks of Discord for a Telegram server:\n%s", out)
	}
	var d strings.Builder
	parseValid(t).WriteSummary(&d)
	if strings.Contains(d.String(), "telegram") {
		t.Errorf("a Discord-only config's summary mentions Telegram:\n%s", d.String())
	}
}

// The example's commented Telegram server, uncommented, is a valid config:
// what the example teaches works.
func TestExampleTelegramServerValidates(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "config.example.toml"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	at := strings.Index(text, "# [[servers]]\n# name = \"phone\"")
	if at < 0 {
		t.Fatal("the example has no commented Telegram server")
	}
	var block []string
	for _, l := range strings.Split(text[at:], "\n") {
		if l == "" {
			break
		}
		block = append(block, strings.TrimPrefix(strings.TrimPrefix(l, "#"), " "))
	}
	t.Setenv("CCBRIDGE_TOKEN_HOME", "tok-0123456789")
	t.Setenv("CCBRIDGE_TOKEN_PHONE", "123456:telegram-token")
	c, err := Parse(text[:at] + strings.Join(block, "\n") + "\n")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("the example's Telegram server does not validate:\n%v", err)
	}
	s := c.Servers[len(c.Servers)-1]
	if !s.Telegram() || s.Projects[0].ChannelID != "-1001234567890.42" || s.OpenRoots[0] != "~/src" {
		t.Errorf("uncommented server %+v", s)
	}
}
