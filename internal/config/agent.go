package config

// The coding agents a project can run in its panes.
const (
	AgentClaude = "claude"
	AgentCodex  = "codex"
)

// DefaultAgent runs where none is named: a project without the key, a
// session whose record names none. Claude Code's own history is its.
const DefaultAgent = AgentClaude

// Agents are the values a project's agent key takes.
var Agents = []string{AgentClaude, AgentCodex}

// DefaultCodexCommand is [codex].command when the file sets none.
const DefaultCodexCommand = "codex"

// Codex describes how OpenAI's Codex CLI is started for the projects whose
// agent is "codex". Its model provider, login and sandbox are the user's
// own Codex config (CODEX_HOME), which ccbridge never writes.
type Codex struct {
	Command string            `toml:"command"`
	Args    []string          `toml:"args"`
	Env     map[string]string `toml:"env"`
}

// AgentName is the project's agent; threads of the project run the same.
func (p Project) AgentName() string {
	if p.Agent == "" {
		return DefaultAgent
	}
	return p.Agent
}

func (c *Codex) applyDefaults() {
	if c.Command == "" {
		c.Command = DefaultCodexCommand
	}
}
