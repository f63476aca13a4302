package config

import (
	"strings"
	"testing"
	"time"
)

func TestAttentionLayers(t *testing.T) {
	t.Setenv("CCBRIDGE_TEST_TOKEN", "tok-0123456789")
	dir := t.TempDir()
	c, err := Parse(strings.ReplaceAll(validTOML, "%s", dir) + `
  footer = "off"
  attention_after = "2m"
  progress = "live"
    [servers.projects.thread]
    mirror_terminal = false
    [[servers.projects.threads]]
    thread_id = "100000000000000009"
    footer = "on"
    attention_turn = "0s"
`)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	p := c.Servers[0].Projects[0]
	if got, want := p.ThreadAttention(""), (Resolved{Footer: false, MirrorTerminal: true, AttentionAfter: 2 * time.Minute, AttentionTurn: 5 * time.Minute}); got != want {
		t.Errorf("project: %v, want %v", got, want)
	}
	if got, want := p.ThreadAttention("100000000000000001"), (Resolved{Footer: false, MirrorTerminal: false, AttentionAfter: 2 * time.Minute, AttentionTurn: 5 * time.Minute}); got != want {
		t.Errorf("other thread: %v, want %v", got, want)
	}
	if got, want := p.ThreadAttention("100000000000000009"), (Resolved{Footer: true, MirrorTerminal: false, AttentionAfter: 2 * time.Minute, AttentionTurn: 0}); got != want {
		t.Errorf("fixed thread: %v, want %v", got, want)
	}
}

func TestAttentionDefaults(t *testing.T) {
	c := parseValid(t)
	if got, want := c.Servers[0].Projects[0].ThreadAttention(""), (Resolved{Footer: true, MirrorTerminal: true, AttentionAfter: 60 * time.Second, AttentionTurn: 5 * time.Minute}); got != want {
		t.Errorf("defaults: %v, want %v", got, want)
	}
}

func TestAttentionValidation(t *testing.T) {
	t.Setenv("CCBRIDGE_TEST_TOKEN", "tok-0123456789")
	c, err := Parse(strings.ReplaceAll(validTOML, "%s", t.TempDir()) + `
  footer = "yes"
  attention_turn = "-1m"
  progress = "chatty"
    [servers.projects.thread]
    footer = "maybe"
`)
	if err != nil {
		t.Fatal(err)
	}
	err = c.Validate()
	for _, want := range []string{
		`servers[home].projects[api].footer: "yes" is not allowed; use one of on, off`,
		`servers[home].projects[api].attention_turn: -1m0s is negative`,
		`servers[home].projects[api].progress: "chatty" is not allowed; use one of off, text, tools, live`,
		`servers[home].projects[api].thread.footer: "maybe" is not allowed; use one of on, off`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %s", err, want)
		}
	}
	if _, err := Parse(strings.ReplaceAll(validTOML, "%s", t.TempDir()) + "\n  attention_after = \"soon\"\n"); err == nil || !strings.Contains(err.Error(), "attention_after") {
		t.Errorf("bad duration: %v", err)
	}
}
