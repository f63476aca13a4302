package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestPolicyAddsUpAndIsChecked(t *testing.T) {
	t.Setenv("CCBRIDGE_TEST_TOKEN", "tok-0123456789")
	text := "[policy]\ndeny = [\"Bash(rm -rf *)\"]\n" + strings.ReplaceAll(validTOML, "%s", t.TempDir()) + `
  [servers.projects.policy]
  ask = ["Bash(git push *)", "Write(.env*)"]
  [servers.projects.thread.policy]
  ask = ["Edit"]
  [[servers.projects.threads]]
  thread_id = "100000000000000009"
  policy = { deny = ["WebFetch"] }
`
	c, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	p := c.Servers[0].Projects[0]
	ch := c.ChannelPolicy(p)
	if !slices.Equal(ch.Deny, []string{"Bash(rm -rf *)"}) || !slices.Equal(ch.Ask, []string{"Bash(git push *)", "Write(.env*)"}) {
		t.Errorf("channel policy %+v", ch)
	}
	th := c.ThreadPolicy(p, "100000000000000009")
	if !slices.Equal(th.Deny, []string{"Bash(rm -rf *)", "WebFetch"}) || !slices.Contains(th.Ask, "Edit") {
		t.Errorf("thread policy %+v", th)
	}
	if !c.RedactOn() {
		t.Error("redaction must be on by default")
	}

	bad, err := Parse("[policy]\nask = [\"Bash(\", \"rm -rf\", \"WebFetch(example.com)\"]\nredact = false\n" + strings.ReplaceAll(validTOML, "%s", t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	msg := bad.Validate()
	if msg == nil || !strings.Contains(msg.Error(), "policy.ask[0]") || !strings.Contains(msg.Error(), "policy.ask[1]") || !strings.Contains(msg.Error(), "policy.ask[2]") {
		t.Errorf("bad rules not reported: %v", msg)
	}
	if bad.RedactOn() {
		t.Error("redact = false ignored")
	}
}

// A session gets its scope's rules; a session of another front end, those
// of the project that holds its directory, and none outside every project.
func TestSessionPolicy(t *testing.T) {
	t.Setenv("CCBRIDGE_TEST_TOKEN", "tok-0123456789")
	proj := t.TempDir()
	c, err := Parse("[policy]\ndeny = [\"Bash(rm -rf *)\"]\n" + strings.ReplaceAll(validTOML, "%s", proj) + `
  [servers.projects.thread.policy]
  ask = ["Edit"]
`)
	if err != nil {
		t.Fatal(err)
	}
	if p := c.SessionPolicy("home", "api", "", proj); !slices.Equal(p.Deny, []string{"Bash(rm -rf *)"}) || len(p.Ask) != 0 {
		t.Errorf("channel: %+v", p)
	}
	if p := c.SessionPolicy("home", "api", "1234", "/elsewhere"); !slices.Equal(p.Ask, []string{"Edit"}) {
		t.Errorf("thread: %+v", p)
	}
	if p := c.SessionPolicy("", "", "", filepath.Join(proj, "sub")); !slices.Equal(p.Deny, []string{"Bash(rm -rf *)"}) {
		t.Errorf("mcp in the project: %+v", p)
	}
	if p := c.SessionPolicy("", "", "", t.TempDir()); len(p.Deny)+len(p.Ask) != 0 {
		t.Errorf("mcp elsewhere: %+v", p)
	}
}

// The config's own directory is kept from the model whole; a directory it
// shares with a project only loses the config file and service.env.
func TestSecretPaths(t *testing.T) {
	t.Setenv("CCBRIDGE_TEST_TOKEN", "tok-0123456789")
	base := t.TempDir()
	proj := filepath.Join(base, "proj")
	c, err := Parse(strings.ReplaceAll(validTOML, "%s", proj))
	if err != nil {
		t.Fatal(err)
	}
	c.Servers[0].TokenFile = filepath.Join(base, "tokens", "home")
	c.Path = filepath.Join(base, "ccbridge", "config.toml")
	if got := c.SecretPaths(); !slices.Equal(got, []string{filepath.Join(base, "ccbridge") + "/", filepath.Join(base, "tokens", "home")}) {
		t.Errorf("own dir: %q", got)
	}
	c.Path = filepath.Join(base, "config.toml") // the project's parent
	if got := c.SecretPaths(); !slices.Equal(got[:2], []string{c.Path, filepath.Join(base, "service.env")}) {
		t.Errorf("shared dir: %q", got)
	}
}

// A directory not named for ccbridge (/etc, a dotfiles folder) is never
// denied whole.
func TestSecretPathsOutsideAnOwnDir(t *testing.T) {
	c := &Config{Path: "/etc/ccbridge.toml"}
	if got := c.SecretPaths(); !slices.Equal(got, []string{"/etc/ccbridge.toml", "/etc/service.env"}) {
		t.Errorf("got %q", got)
	}
}

// TestReview3OpenedFolderInAProjectSkipsItsPolicy: a folder opened with
// /open (a server session of no configured project) in a project's
// directory gets that project's channel policy, as ccbridge mcp there
// does; also when the project's path goes through a symlink.
func TestReview3OpenedFolderInAProjectSkipsItsPolicy(t *testing.T) {
	t.Setenv("CCBRIDGE_TEST_TOKEN", "tok-0123456789")
	src := t.TempDir()
	proj := filepath.Join(src, "api")
	if err := os.MkdirAll(filepath.Join(proj, "internal"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "src-link")
	if err := os.Symlink(src, link); err != nil {
		t.Fatal(err)
	}
	want := []string{"Bash(curl *)", "Bash(git push *)", "Edit(.github/**)"}
	for _, path := range []string{proj, filepath.Join(link, "api")} {
		c, err := Parse("[policy]\ndeny = [\"Bash(curl *)\"]\n" + strings.ReplaceAll(validTOML, "%s", path) + `
  [servers.projects.policy]
  deny = ["Bash(git push *)", "Edit(.github/**)"]
`)
		if err != nil {
			t.Fatal(err)
		}
		if p := c.SessionPolicy("", "", "", proj); !slices.Equal(p.Deny, want) {
			t.Errorf("path %s: ccbridge mcp in the project: %q", path, p.Deny)
		}
		for _, dir := range []string{proj, filepath.Join(proj, "internal")} {
			if p := c.SessionPolicy("home", "_open", "100000000000000077", dir); !slices.Equal(p.Deny, want) {
				t.Errorf("path %s: /open of %s: %q, want %q", path, dir, p.Deny, want)
			}
		}
		if p := c.SessionPolicy("home", "_open", "100000000000000077", src); !slices.Equal(p.Deny, want[:1]) {
			t.Errorf("path %s: /open outside every project: %q, want the top level's", path, p.Deny)
		}
		if got := c.ProjectsWithin(src); len(got) != 1 || got[0].Name != "api" {
			t.Errorf("path %s: projects within %s: %+v", path, src, got)
		}
		if got := c.ProjectsWithin(proj); len(got) != 0 {
			t.Errorf("path %s: projects within the project itself: %+v", path, got)
		}
	}
}
