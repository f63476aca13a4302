package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpenRootsDefaultNone(t *testing.T) {
	c := parseValid(t)
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(c.Servers[0].OpenRoots) != 0 {
		t.Fatalf("open_roots = %v by default; /open must be off until set", c.Servers[0].OpenRoots)
	}
}

func TestOpenRootsValidated(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CCBRIDGE_TEST_TOKEN", "tok-0123456789")
	c, err := Parse(strings.ReplaceAll(validTOML, "%s", dir) + `
[[servers]]
name = "work"
token_env = "CCBRIDGE_TEST_TOKEN"
guild_id = "100000000000000011"
owner_ids = ["100000000000000002"]
open_roots = ["relative/src", "", "` + file + `", "` + dir + `", "` + dir + `/", "~/src", "` + filepath.Join(dir, "gone") + `"]
`)
	if err != nil {
		t.Fatal(err)
	}
	err = c.Validate()
	if err == nil {
		t.Fatal("bad open_roots validated")
	}
	msg := err.Error()
	for _, want := range []string{
		`servers[work].open_roots[0]: "relative/src" must be an absolute path or start with ~/`,
		`servers[work].open_roots[1]: empty`,
		`servers[work].open_roots[2]: ` + file + ` is not a directory`,
		`servers[work].open_roots[4]: ` + dir + ` is listed twice`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("missing problem %q in:\n%s", want, msg)
		}
	}
	for _, p := range c.Check() {
		if p.Key == "servers[work].open_roots[6]" && !p.Warning {
			t.Errorf("a root that does not exist yet is an error, not a warning: %v", p)
		}
		if p.Key == "servers[work].open_roots[3]" || p.Key == "servers[work].open_roots[5]" && !p.Warning {
			t.Errorf("a good root was refused: %v", p)
		}
	}
}

func TestSummaryNamesOpenRoots(t *testing.T) {
	c := parseValid(t)
	var b strings.Builder
	c.WriteSummary(&b)
	if strings.Contains(b.String(), "/open") {
		t.Errorf("a summary without open_roots mentions /open:\n%s", b.String())
	}
	c.Servers[0].OpenRoots = []string{"~/src", "/work"}
	b.Reset()
	c.WriteSummary(&b)
	if !strings.Contains(b.String(), ", /open under ~/src, /work\n") {
		t.Errorf("summary:\n%s", b.String())
	}
}
