package config

import (
	"strings"
	"testing"
)

func TestAgentKeys(t *testing.T) {
	t.Setenv("CCBRIDGE_TEST_TOKEN", "tok-0123456789")
	base := strings.ReplaceAll(validTOML, "%s", t.TempDir())
	c, err := Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Servers[0].Projects[0].AgentName(); got != AgentClaude {
		t.Errorf("default agent %q", got)
	}
	if c.Codex.Command != DefaultCodexCommand {
		t.Errorf("default [codex].command %q", c.Codex.Command)
	}
	c, err = Parse(base + "  agent = \"codex\"\n[codex]\ncommand = \"/opt/codex\"\nargs = [\"--profile\", \"x\"]\nenv = { CODEX_HOME = \"/c\" }\n")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if p := c.Servers[0].Projects[0]; p.AgentName() != AgentCodex || c.Codex.Command != "/opt/codex" ||
		strings.Join(c.Codex.Args, " ") != "--profile x" || c.Codex.Env["CODEX_HOME"] != "/c" {
		t.Errorf("codex project: %+v, %+v", p, c.Codex)
	}
	// A typo names the key and the values allowed.
	c, err = Parse(base + "  agent = \"codx\"\n")
	if err != nil {
		t.Fatal(err)
	}
	err = c.Validate()
	if err == nil || !strings.Contains(err.Error(), "servers[home].projects[api].agent") || !strings.Contains(err.Error(), `"codx" is not allowed; use one of claude, codex`) {
		t.Errorf("typo: %v", err)
	}
}
