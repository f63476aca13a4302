package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const validTOML = `
[[servers]]
name = "home"
token_env = "CCBRIDGE_TEST_TOKEN"
guild_id = "100000000000000001"
owner_ids = ["100000000000000002"]

  [[servers.projects]]
  name = "api"
  channel_id = "100000000000000003"
  path = "%s"
`

func parseValid(t *testing.T) *Config {
	t.Helper()
	t.Setenv("CCBRIDGE_TEST_TOKEN", "tok-0123456789")
	c, err := Parse(strings.ReplaceAll(validTOML, "%s", t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestExampleValidates(t *testing.T) {
	t.Setenv("CCBRIDGE_TOKEN_HOME", "tok-0123456789")
	c, err := Load(filepath.Join("..", "..", "config.example.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("example does not validate:\n%v", err)
	}
	if c.Servers[0].TmuxSession != "ccbridge-home" || c.Claude.PromptTimeout.Duration != 30*time.Minute {
		t.Errorf("defaults not applied: %+v", c)
	}
}

func TestDefaults(t *testing.T) {
	c := parseValid(t)
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	p := c.Servers[0].Projects[0]
	checks := map[string][2]string{
		"api_base":  {c.Discord.APIBase, DefaultAPIBase},
		"socket":    {c.Tmux.Socket, DefaultSocket},
		"command":   {c.Claude.Command, DefaultCommand},
		"mode":      {c.Claude.PermissionMode, DefaultPermissionMode},
		"session":   {c.Servers[0].TmuxSession, "ccbridge-home"},
		"isolation": {p.Thread.Isolation, DefaultIsolation},
		"progress":  {p.Progress, DefaultProgress},
	}
	for name, c := range checks {
		if c[0] != c[1] {
			t.Errorf("%s = %q, want %q", name, c[0], c[1])
		}
	}
}

func TestUnknownKeysListed(t *testing.T) {
	_, err := Parse("[tmux]\nsockett = \"x\"\n[claude]\nmdoel = \"y\"\n")
	if err == nil {
		t.Fatal("unknown keys accepted")
	}
	for _, k := range []string{"tmux.sockett", "claude.mdoel"} {
		if !strings.Contains(err.Error(), k) {
			t.Errorf("error %q does not name %s", err, k)
		}
	}
}

func TestBadDurationNamesValue(t *testing.T) {
	_, err := Parse("[claude]\nprompt_timeout = \"soon\"\n")
	if err == nil || !strings.Contains(err.Error(), "soon") {
		t.Fatalf("err = %v", err)
	}
}

// TestValidateReportsEveryProblem breaks many keys at once and checks that
// each problem is reported with its key and, where there is a set, the
// allowed values.
func TestValidateReportsEveryProblem(t *testing.T) {
	t.Setenv("CCBRIDGE_TEST_TOKEN", "")
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o600)
	c, err := Parse(`
[discord]
api_base = "discord.com"
[tmux]
socket = "/tmp/x"
[claude]
permission_mode = "yolo"
prompt_timeout = "-1s"
env = { CCBRIDGE_SESSION = "x" }

[[servers]]
name = "home"
token_env = "CCBRIDGE_TEST_TOKEN"
guild_id = "abc"
owner_ids = []
  [[servers.projects]]
  name = "api"
  channel_id = "100000000000000003"
  permission_mode = "sometimes"
  progress = "loud"
    [servers.projects.thread]
    isolation = "container"
  [[servers.projects]]
  name = "api"
  channel_id = "100000000000000003"
  path = "relative/dir"
[[servers]]
name = "home"
token_env = "X"
token_file = "/y"
guild_id = "100000000000000001"
owner_ids = ["100000000000000002"]
  [[servers.projects]]
  name = "web"
  channel_id = "100000000000000003"
  path = "` + file + `"
`)
	if err != nil {
		t.Fatal(err)
	}
	err = c.Validate()
	if err == nil {
		t.Fatal("broken config validated")
	}
	msg := err.Error()
	for _, want := range []string{
		"discord.api_base",
		"tmux.socket",
		"claude.permission_mode: \"yolo\" is not allowed; use one of default (or manual), acceptEdits, plan, auto, bypassPermissions, dontAsk",
		"claude.prompt_timeout",
		"claude.env.CCBRIDGE_SESSION",
		"servers[home].token_env: environment variable CCBRIDGE_TEST_TOKEN is not set",
		"servers[home].guild_id: \"abc\" is not a Discord id",
		"servers[home].owner_ids: empty",
		"servers[home].projects[api].path: missing",
		"servers[home].projects[api].permission_mode: \"sometimes\" is not allowed",
		"servers[home].projects[api].progress: \"loud\" is not allowed; use one of off, text, tools",
		"servers[home].projects[api].thread.isolation: \"container\" is not allowed; use one of none, worktree",
		"servers[home].projects[1].name: \"api\" is used by more than one project",
		"servers[home].projects[1].channel_id: 100000000000000003 is already used by servers[home].projects[api].channel_id",
		"servers[home].projects[1].path: \"relative/dir\" must be an absolute path",
		"servers[1].name: \"home\" is used by more than one server",
		"servers[1].token_env: set only one of token_env, token_file and token",
		"servers[1].projects[web].channel_id: 100000000000000003 is already used",
		"servers[1].projects[web].path: " + file + " is not a directory",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("missing problem %q", want)
		}
	}
	if t.Failed() {
		t.Logf("all problems:\n%s", msg)
	}
}

func TestNoServers(t *testing.T) {
	c, _ := Parse("")
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "servers: no [[servers]]") {
		t.Fatalf("err = %v", err)
	}
}

func TestTokenFileAndWarnings(t *testing.T) {
	dir := t.TempDir()
	tok := filepath.Join(dir, "t")
	os.WriteFile(tok, []byte("secret-token-value\n"), 0o644)
	c := parseValid(t)
	c.Servers[0].TokenEnv = ""
	c.Servers[0].TokenFile = tok
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	got, err := c.Servers[0].ResolveToken()
	if err != nil || got != "secret-token-value" {
		t.Fatalf("ResolveToken = %q, %v", got, err)
	}
	var warned bool
	for _, p := range c.Check() {
		warned = warned || (p.Warning && strings.Contains(p.Msg, "chmod 600"))
	}
	if !warned {
		t.Error("no warning for a world-readable token file")
	}
}

func TestSummaryRedactsToken(t *testing.T) {
	c := parseValid(t)
	var b strings.Builder
	c.WriteSummary(&b)
	if strings.Contains(b.String(), "tok-0123456789") {
		t.Fatalf("summary leaks the token:\n%s", b.String())
	}
	if !strings.Contains(b.String(), "$CCBRIDGE_TEST_TOKEN (…6789)") || !strings.Contains(b.String(), "project api") ||
		!strings.Contains(b.String(), "machine:     "+c.General.Machine+" (unreachable after 3m0s") ||
		!strings.Contains(b.String(), "policy:      redaction on, 0 ask rule(s), 0 deny rule(s)") ||
		!strings.Contains(b.String(), "    progress text, footer on, terminal mirrored on, owners mentioned after a card waits 1m0s / a turn runs 5m0s") {
		t.Errorf("summary:\n%s", b.String())
	}
}

func TestDefaultPath(t *testing.T) {
	t.Setenv(EnvConfig, "/from/env.toml")
	if p, _ := DefaultPath("/flag.toml"); p != "/flag.toml" {
		t.Errorf("flag ignored: %s", p)
	}
	if p, _ := DefaultPath(""); p != "/from/env.toml" {
		t.Errorf("env ignored: %s", p)
	}
	t.Setenv(EnvConfig, "")
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("HOME", "/home/u")
	if p, _ := DefaultPath(""); p != "/home/u/.config/ccbridge/config.toml" {
		t.Errorf("default = %s", p)
	}
}

func TestGeneralMachine(t *testing.T) {
	base := "[[servers]]\nname = \"a\"\ntoken = \"x\"\nguild_id = \"100000000000000001\"\nowner_ids = [\"100000000000000002\"]\n"
	c, err := Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	host, _, _ = strings.Cut(host, ".")
	if c.General.Machine != host && c.General.Machine != DefaultMachine {
		t.Errorf("default machine %q, host %q", c.General.Machine, host)
	}
	if c.General.UnreachableAfter.Duration != DefaultUnreachableAfter {
		t.Errorf("default unreachable_after %s", c.General.UnreachableAfter)
	}
	for text, want := range map[string]string{
		"[general]\nmachine = \"my box\"\n":       "general.machine",
		"[general]\nmachine = \"../x\"\n":         "general.machine",
		"[general]\nunreachable_after = \"1s\"\n": "general.unreachable_after",
		"[general]\nunreachable_after = \"2h\"\n": "general.unreachable_after",
		"[general]\nmachnie = \"x\"\n":            "unknown keys",
	} {
		c, err := Parse(text + base)
		if err == nil {
			err = c.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want an error naming %s", text, err, want)
		}
	}
	c, err = Parse("[general]\nmachine = \"build-2\"\nunreachable_after = \"15s\"\n" + base)
	if err != nil {
		t.Fatal(err)
	}
	if c.General.Machine != "build-2" || c.General.UnreachableAfter.Duration != 15*time.Second {
		t.Errorf("got %+v", c.General)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("valid general: %v", err)
	}
}
