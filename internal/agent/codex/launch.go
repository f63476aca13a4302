package codex

import (
	"fmt"
	"strings"

	"github.com/ccbridge/ccbridge/internal/agent"
	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/codexhook"
)

// hookWait bounds the hooks that only record and post: Codex runs its
// hooks synchronously (it has no async hooks), so they must end fast.
const hookWait = 30

// hookEvents maps each Codex hook event ccbridge registers to the binary
// that handles it (true: ccbridge-hook-pretool). PermissionRequest posts
// the card and returns at once with no decision: Codex runs it before its
// dialog and hides the dialog while it waits (agents.md §1.3.4), so the
// card is answered with the dialog's keys (internal/session), and the
// terminal can answer too.
var hookEvents = []struct {
	event   string
	pretool bool
}{
	{"PermissionRequest", true},
	{"SessionStart", false},
	{"UserPromptSubmit", false},
	{"PreToolUse", true},
	{"PostToolUse", true},
	{"Stop", false},
	{"Interrupt", false},
	{"SessionEnd", false},
}

// Argv is the command line of a session's Codex:
//   - --no-daemon: otherwise every TUI of one CODEX_HOME shares one
//     background app server, which runs the hooks of all of them with the
//     environment of the pane that started it (agents.md §1.1);
//   - the hooks, as -c overrides of this process's config: the user's
//     config.toml is never written (verified on 0.171.0: overrides add
//     hooks, and nothing of them is persisted);
//   - --dangerously-bypass-hook-trust: hooks given on the command line
//     would otherwise stop Codex at start in "Hooks need review", which no
//     hook reports, every time (an override is never persisted as
//     trusted). The flag holds for this invocation only; it also lets
//     hooks of the user's own config run unreviewed.
func (c Codex) Argv(s agent.Spec) []string {
	argv := []string{c.Command}
	if s.Resume != "" {
		argv = append(argv, "resume", s.Resume)
	}
	argv = append(argv, c.Args...)
	argv = append(argv, "--no-daemon", "--dangerously-bypass-hook-trust")
	for _, h := range hookEvents {
		bin := s.StopHook
		if h.pretool {
			bin = s.PreToolHook
		}
		hooks := []string{hookEntry(bin, "", s.Rules, hookWait)}
		if h.event == "PreToolUse" {
			// The [policy]: Codex runs every hook synchronously, and its
			// PreToolUse takes a deny (internal/hook turns an ask into one).
			hooks = append(hooks, hookEntry(bin, claudehook.PolicyFlag, s.Rules, hookWait))
		}
		argv = append(argv, "-c", fmt.Sprintf("hooks.%s=[{hooks=[%s]}]", h.event, strings.Join(hooks, ",")))
	}
	argv = append(argv, outputsArgs(s)...) // outputs.go
	if s.Model != "" {
		argv = append(argv, "--model", s.Model)
	}
	return argv
}

// hookEntry is one command hook, as an inline TOML table.
func hookEntry(bin, flag, rules string, wait int) string {
	cmd := shellQuote(bin)
	if flag != "" {
		cmd += " " + flag
	}
	cmd += " " + codexhook.AgentFlag
	if rules != "" {
		cmd += " " + shellQuote(rules)
	}
	return fmt.Sprintf("{type=\"command\",command=%s,timeout=%d}", tomlString(cmd), wait)
}

// shellQuote quotes a word for the shell Codex runs hook commands in.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// tomlString writes s as a TOML basic string: the value of a -c override
// is parsed as TOML.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
