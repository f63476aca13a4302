package config

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Encode keeps every key and value a config holds: decoding what it wrote
// gives the same config, for the example and for one that sets every kind
// of field (nested tables, arrays of tables, maps, durations, odd strings).
func TestEncodeKeepsEveryKeyAndValue(t *testing.T) {
	example, err := os.ReadFile("../../config.example.toml")
	if err != nil {
		t.Fatal(err)
	}
	rich := `
[general]
machine = "desk-1"
unreachable_after = "45s"
[discord]
api_base = "http://127.0.0.1:1"
[tmux]
socket = "s"
[claude]
command = "/opt/claude"
args = ["--x", "quote \" and \\ and \t tab"]
env = { ANTHROPIC_BASE_URL = "http://h", "WEIRD KEY" = "ü" }
permission_mode = "plan"
prompt_timeout = "1h30m"
start_timeout = "45s"
[[servers]]
name = "a"
token_file = "~/a.token"
guild_id = "100000000000000001"
owner_ids = ["100000000000000002", "100000000000000005"]
general_channel_id = "100000000000000009"
  [[servers.projects]]
  name = "p"
  channel_id = "100000000000000003"
  path = "~/src/p"
  model = "opus"
  startup = true
  progress = "tools"
    [servers.projects.thread]
    isolation = "worktree"
    [[servers.projects.threads]]
    thread_id = "100000000000000004"
    name = "docs"
    startup = true
  [[servers.projects]]
  name = "q"
  channel_id = "100000000000000006"
  path = "/abs/q"
[[servers]]
name = "b"
token_env = "TOK_B"
guild_id = "100000000000000007"
owner_ids = ["100000000000000002"]
`
	for name, text := range map[string]string{"example": string(example), "rich": rich} {
		c, err := Decode(text)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out := Encode(c, "written by a test\n")
		back, err := Decode(string(out))
		if err != nil {
			t.Fatalf("%s: re-decode: %v\n%s", name, err, out)
		}
		if !reflect.DeepEqual(c, back) {
			t.Errorf("%s: round trip changed the config\nbefore %+v\nafter  %+v\n%s", name, c, back, out)
		}
		if !strings.HasPrefix(string(out), "# written by a test\n") {
			t.Errorf("%s: header missing:\n%s", name, out)
		}
	}
	c, _ := Decode(rich)
	if c.Claude.PromptTimeout.Duration != 90*time.Minute {
		t.Fatalf("decoded %v", c.Claude.PromptTimeout)
	}
	out := string(Encode(c, ""))
	for _, absent := range []string{"model = \"\"", "startup = false", "token = "} {
		if strings.Contains(out, absent) {
			t.Errorf("unset key written (%q):\n%s", absent, out)
		}
	}
}

// Decode applies no defaults, so Encode does not write them into the file.
func TestDecodeAppliesNoDefaults(t *testing.T) {
	c, err := Decode("[discord]\napi_base = \"http://x\"\n")
	if err != nil {
		t.Fatal(err)
	}
	if c.Tmux.Socket != "" || c.Claude.Command != "" {
		t.Errorf("defaults applied: %+v", c)
	}
	if _, err := Decode("[discord]\nnope = 1\n"); err == nil || !strings.Contains(err.Error(), "discord.nope") {
		t.Errorf("unknown key: %v", err)
	}
}

func TestValueKinds(t *testing.T) {
	for v, want := range map[any]string{1.0: "1.0", 2.5: "2.5", uint8(3): "3", int32(-4): "-4", true: "true", "a\"b\x01": `"a\"b\u0001"`} {
		if got := value(reflect.ValueOf(v)); got != want {
			t.Errorf("value(%v) = %s, want %s", v, got, want)
		}
	}
}

// Durations are written back as the user wrote them ("30m", not "30m0s");
// one changed since is written anew.
func TestEncodeKeepsDurationsAsWritten(t *testing.T) {
	c, err := Decode("[claude]\nprompt_timeout = \"30m\"\nstart_timeout = \"90s\"\n[discord]\ncatch_up = \"1h\"\n")
	if err != nil {
		t.Fatal(err)
	}
	c.Discord.CatchUp.Duration = 2 * time.Hour
	out := string(Encode(c, ""))
	for _, want := range []string{`prompt_timeout = "30m"`, `start_timeout = "90s"`, `catch_up = "2h0m0s"`} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %s:\n%s", want, out)
		}
	}
}
