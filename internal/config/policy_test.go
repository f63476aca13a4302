package config

import (
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

	bad, err := Parse("[policy]\nask = [\"Bash(\", \"rm -rf\"]\nredact = false\n" + strings.ReplaceAll(validTOML, "%s", t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	msg := bad.Validate()
	if msg == nil || !strings.Contains(msg.Error(), "policy.ask[0]") || !strings.Contains(msg.Error(), "policy.ask[1]") {
		t.Errorf("bad rules not reported: %v", msg)
	}
	if bad.RedactOn() {
		t.Error("redact = false ignored")
	}
}
