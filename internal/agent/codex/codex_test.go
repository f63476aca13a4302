package codex

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/ccbridge/ccbridge/internal/agent"
)

// Screens as Codex 0.171.0 drew them in a 160x50 pane (agents.md §1.4,
// and the e2e tier), trimmed.
const (
	idle = `  >_ OpenAI Codex (v0.171.0)
     /tmp/p

› hello SCN_P

• probe reply one

  Worked for <1s • 12:59

› Ask Codex to do anything
  gpt-fake default · /tmp/p · Fake title
  ← for agents · ? for shortcuts                                  ⚠ 3 warnings · f2 to view
`
	typed = `› hello

• hi

› please run the tests and tell me
  what failed
  gpt-fake default · /tmp/p · Fake title
  ← for agents · ? for shortcuts
`
	busy = `› run SCN_CODEX_ECHO

• Working (3s • esc to interrupt)

› Ask Codex to do anything
  gpt-fake default · /tmp/p
  ← for agents · ? for shortcuts
`
	approval = `• Running touch touched.txt && echo touched-ok
  Would you like to run the following command?
  Environment: local
  Reason: Create a file outside the sandbox?
  $ touch touched.txt && echo touched-ok
› 1. Yes, proceed (y)
  2. Yes, and don't ask again for commands that start with ` + "`touch touched.txt`" + ` (p)
  3. No, and tell Codex what to do differently (esc)
  Press enter to confirm or esc to cancel
`
	trust = `  Folder access
  /home/u/proj
  Trust this folder? Codex can read, edit, and run files here, subject to your permission settings.
› 1. Trust and continue
  2. Back to Agent Command Center
  enter continue · esc back
`
	hooks = `  Hooks need review
  2 hooks are new or changed.
› 1. Review hooks
  2. Trust all and continue
  3. Continue without trusting (hooks won't run)
  enter confirm · esc skip
`
	// Still loading: the composer shows, its footer not yet (text typed
	// now was seen lost, and the screen redraws under it).
	loading = `  >_ OpenAI Codex (v0.171.0)
     loading

› Ask Codex to do anything
  ? for shortcuts
`
	// The model's prose names the key, far above the composer.
	prose = `› what is the key?

• The TUI says esc to interrupt while a turn runs.

  more
  lines
  of
  the
  reply
  here

› Ask Codex to do anything
  gpt-fake default · /tmp/p
`
)

func TestScreens(t *testing.T) {
	c := Codex{}
	for name, tc := range map[string]struct {
		screen             string
		shown, ready, busy bool
	}{
		"idle":     {idle, true, true, false},
		"typed":    {typed, true, true, false},
		"busy":     {busy, true, false, true},
		"approval": {approval, false, false, false},
		"trust":    {trust, false, false, false},
		"hooks":    {hooks, false, false, false},
		"prose":    {prose, true, true, false},
		"starting": {"  >_ OpenAI Codex (v0.171.0)\n", false, false, false},
		"loading":  {loading, true, false, false},
	} {
		if got := c.InputBoxShown(tc.screen); got != tc.shown {
			t.Errorf("%s: InputBoxShown %v", name, got)
		}
		if got := c.InputReady(tc.screen); got != tc.ready {
			t.Errorf("%s: InputReady %v", name, got)
		}
		if got := c.Busy(tc.screen); got != tc.busy {
			t.Errorf("%s: Busy %v", name, got)
		}
		if got, want := c.DialogOpen(tc.screen), name == "approval" || name == "trust" || name == "hooks"; got != want {
			t.Errorf("%s: DialogOpen %v", name, got)
		}
	}
	if !c.InputHolds(typed, "please run the tests and tell me what failed") {
		t.Error("the typed text is not seen in the composer")
	}
	if c.InputHolds(typed, "hello") || c.InputHolds(approval, "1. Yes") {
		t.Error("a conversation line or a dialog choice taken for the composer")
	}
	if !c.InputHolds("› [Pasted Content 1962 chars]\n  gpt-fake default · /tmp/p\n", strings.Repeat("x", 1962)) {
		t.Error("a large paste's placeholder is not seen")
	}
	for _, s := range []string{approval, trust, hooks} {
		var guarded bool
		for _, c := range c.DialogChrome() {
			guarded = guarded || strings.Contains(s, c)
		}
		if !guarded {
			t.Errorf("no key guard for the dialog:\n%s", s)
		}
	}
}

func TestArgvRegistersHooksPerProcess(t *testing.T) {
	c := Codex{Command: "/opt/codex", Args: []string{"--profile", "work"}}
	argv := c.Argv(agent.Spec{Model: "gpt-x", PromptTimeout: 10 * time.Minute, Resume: "01a2-sid", StopHook: "/b/hook stop", PreToolHook: "/b/it's-pre",
		Rules: `--rules={"ask":["Bash(rm \"x\")"]}`})
	head := strings.Join(argv[:8], " ")
	if head != "/opt/codex resume 01a2-sid --profile work --no-daemon --dangerously-bypass-hook-trust -c" {
		t.Errorf("argv starts %q", head)
	}
	if strings.Join(argv[len(argv)-2:], " ") != "--model gpt-x" {
		t.Errorf("argv ends %q", argv[len(argv)-2:])
	}
	// Each override parses as TOML to the hook command the shell gets.
	got := map[string]string{}
	for i, a := range argv {
		if a != "-c" {
			continue
		}
		var v struct {
			Hooks map[string][]struct {
				Hooks []struct {
					Type, Command string
					Timeout       int
				}
			}
		}
		if _, err := toml.Decode(argv[i+1], &v); err != nil {
			t.Fatalf("%q: %v", argv[i+1], err)
		}
		for ev, groups := range v.Hooks {
			for i, h := range groups[0].Hooks {
				// Every hook ends fast, PermissionRequest too: it returns
				// at once so that Codex shows its dialog.
				if h.Type != "command" || h.Timeout != hookWait {
					t.Errorf("%s: %+v", ev, h)
				}
				got[fmt.Sprint(ev, i)] = h.Command
			}
		}
	}
	rules := `'--rules={"ask":["Bash(rm \"x\")"]}'`
	for ev, want := range map[string]string{
		"Stop0":              `'/b/hook stop' --agent=codex ` + rules,
		"UserPromptSubmit0":  `'/b/hook stop' --agent=codex ` + rules,
		"Interrupt0":         `'/b/hook stop' --agent=codex ` + rules,
		"PreToolUse0":        `'/b/it'\''s-pre' --agent=codex ` + rules,
		"PreToolUse1":        `'/b/it'\''s-pre' --policy --agent=codex ` + rules,
		"PermissionRequest0": `'/b/it'\''s-pre' --agent=codex ` + rules,
	} {
		if got[ev] != want {
			t.Errorf("%s: %s, want %s", ev, got[ev], want)
		}
	}
}
