// Package claude is the agent adapter for Claude Code: its command line.
// Its screen reading lives in internal/session (screen.go), which predates
// the seam and which the test kit shares; the session manager hands it in.
package claude

import "github.com/ccbridge/ccbridge/internal/agent"

// Claude is the adapter.
type Claude struct {
	agent.Screen
	// Command, Args and Environ are [claude].command, args and env.
	Command string
	Args    []string
	Environ map[string]string
}

// Name is the config's name of the agent.
func (Claude) Name() string { return "claude" }

// Speaker is "Claude", as ccbridge's notices have always said.
func (Claude) Speaker() string { return "Claude" }

// Program is [claude].command.
func (c Claude) Program() (command, key, title string) {
	return c.Command, "[claude].command", "Claude Code"
}

// Env is [claude].env.
func (c Claude) Env() map[string]string { return c.Environ }

// Argv is Claude Code's command line: the hooks and the policy go inline
// in --settings (no file someone else could replace).
func (c Claude) Argv(s agent.Spec) []string {
	argv := append([]string{c.Command}, c.Args...)
	if s.PermissionMode != "" {
		argv = append(argv, "--permission-mode", s.PermissionMode)
	}
	argv = append(argv, "--settings", s.Settings)
	if s.SystemPrompt != "" {
		argv = append(argv, "--append-system-prompt", s.SystemPrompt)
	}
	argv = append(argv, s.Args...)
	if s.Model != "" {
		argv = append(argv, "--model", s.Model)
	}
	if s.Resume != "" {
		argv = append(argv, "--resume", s.Resume)
		if s.Fork {
			argv = append(argv, "--fork-session")
		}
	}
	return argv
}
