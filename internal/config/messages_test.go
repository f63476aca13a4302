package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func problemsOf(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.toml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	_, problems, err := LoadAll(path)
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, p := range problems {
		all = append(all, p.Error())
	}
	return strings.Join(all, "\n")
}

const oneServer = `[[servers]]
name = "home"
token_env = "HOME"
guild_id = "100000000000000001"
`

// A number where a list of ids belongs: one clear error, not the decoder's
// words followed by a wrong "empty".
func TestOwnerIDsAsANumber(t *testing.T) {
	for _, v := range []string{`424242424242424242`, `[424242424242424242]`, `"424242424242424242"`} {
		got := problemsOf(t, oneServer+"owner_ids = "+v+"\n")
		want := `servers[home].owner_ids: must be a list of quoted ids, e.g. ["424242424242424242"]`
		if !strings.Contains(got, want) || strings.Contains(got, "empty") || strings.Contains(got, "TOML value") {
			t.Errorf("owner_ids = %s:\n%s", v, got)
		}
	}
}

// Two projects of one name: the second is named by its index, so a
// message about it does not seem to point at the first.
func TestDuplicateProjectNamesByIndex(t *testing.T) {
	dir := t.TempDir()
	got := problemsOf(t, oneServer+`owner_ids = ["100000000000000002"]
[[servers.projects]]
name = "api"
channel_id = "100000000000000003"
path = "`+dir+`"
[[servers.projects]]
name = "api"
channel_id = "100000000000000003"
path = "`+dir+`"
`)
	for _, want := range []string{
		`servers[home].projects[1].name: "api" is used by more than one project`,
		"servers[home].projects[1].channel_id: 100000000000000003 is already used by servers[home].projects[api].channel_id",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q:\n%s", want, got)
		}
	}
}

// A key put in the wrong table says where it belongs.
func TestKeyInTheWrongTable(t *testing.T) {
	got := problemsOf(t, "[claude]\nowner_ids = [\"100000000000000002\"]\n")
	if !strings.Contains(got, "claude.owner_ids: unknown key here; it belongs in [[servers]]") {
		t.Errorf("got:\n%s", got)
	}
	got = problemsOf(t, "[tmux]\npermission_mode = \"plan\"\n")
	if !strings.Contains(got, "tmux.permission_mode: unknown key here; it belongs in [claude], [[servers.projects]]") {
		t.Errorf("got:\n%s", got)
	}
}

// `manual`, the CLI's word for the default mode, is accepted as its alias
// (claude --help lists it among --permission-mode's choices).
func TestManualIsTheDefaultMode(t *testing.T) {
	c, err := Parse("[claude]\npermission_mode = \"manual\"\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range c.Check() {
		if strings.Contains(p.Key, "permission_mode") {
			t.Errorf("manual refused: %s", p)
		}
	}
	if c.Claude.PermissionMode != "default" || NormalizePermissionMode("manual") != "default" {
		t.Errorf("manual is %q", c.Claude.PermissionMode)
	}
}
