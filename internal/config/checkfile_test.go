package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Every problem of a file in one run: a value that does not decode, a
// misspelt key (with the key meant), an unknown table, and what validation
// finds in the rest.
func TestLoadAllListsEveryProblem(t *testing.T) {
	text := `[claude]
permision_mode = "plan"
prompt_timeout = "30 minutes"
start_timeout = 5

[mystery]
x = 1

[[servers]]
name = "bad name"
token_env = "T"
guild_id = "12"
owner_ids = ["100000000000000002"]
  [[servers.projects]]
  name = "api"
  channel_id = "100000000000000003"
  path = "relative/dir"
  progress = "verbose"
  startup = "yes"
`
	path := filepath.Join(t.TempDir(), "c.toml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	c, problems, err := LoadAll(path)
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, p := range problems {
		all = append(all, p.Error())
	}
	got := strings.Join(all, "\n")
	for _, want := range []string{
		"claude.permision_mode: unknown key; did you mean permission_mode?",
		`claude.prompt_timeout: not a duration like "30m" or "90s": "30 minutes"`,
		"claude.start_timeout: ",
		"mystery: unknown key",
		"servers[bad name].projects[api].startup: ",
		`"verbose" is not allowed`,
		"relative/dir",
		"guild_id",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q; got:\n%s", want, got)
		}
	}
	if c.Claude.PromptTimeout.Duration != DefaultPromptTimeout || len(c.Servers) != 1 || c.Servers[0].Projects[0].Path != "relative/dir" {
		t.Errorf("the rest was not decoded: %+v", c)
	}
	if strings.Contains(got, "mystery: unknown key; did you mean") {
		t.Errorf("a suggestion for a key nothing resembles:\n%s", got)
	}
}

func TestLoadAllOnAGoodFileIsLoad(t *testing.T) {
	c, problems, err := LoadAll("../../config.example.toml")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := Load("../../config.example.toml")
	if !reflect.DeepEqual(c, want) {
		t.Errorf("LoadAll and Load differ")
	}
	if !reflect.DeepEqual(problems, want.Check()) {
		t.Errorf("problems %v, Check %v", problems, want.Check())
	}
	if _, _, err := LoadAll(filepath.Join(t.TempDir(), "none.toml")); !os.IsNotExist(unwrapAll(err)) {
		t.Errorf("missing file: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.toml")
	_ = os.WriteFile(bad, []byte("[claude\n"), 0o600)
	if _, _, err := LoadAll(bad); err == nil {
		t.Error("TOML that does not parse is an error")
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}
