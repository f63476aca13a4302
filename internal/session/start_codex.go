package session

import (
	"context"
	"maps"

	"github.com/ccbridge/ccbridge/internal/agent"
	"github.com/ccbridge/ccbridge/internal/config"
)

// startCodex starts a session's Codex CLI (agent codex). Its model
// provider, login and sandbox come from the user's own Codex config
// (CODEX_HOME, which [codex].env may set); ccbridge adds only its hooks,
// on the command line (agent/codex). Claude's permission modes and system
// prompt do not apply.
func (m *Manager) startCodex(ctx context.Context, t Target) (string, error) {
	cfg := m.config()
	c := codexAgent(cfg)
	path := codexPath(cfg)
	if err := m.opt.FindProgram(c.Command, path); err != nil {
		return "", &CommandError{Command: c.Command, Path: path, Err: err, Codex: true}
	}
	outputs, err := m.opt.Store.Dir.Outputs(t.Key)
	if err != nil {
		return "", err
	}
	sp, _ := m.sessionPolicy(t)
	argv := c.Argv(agent.Spec{Dir: t.Dir, Model: t.Model, Resume: t.Resume, StopHook: m.opt.HookStop, PreToolHook: m.opt.HookPretool,
		Rules: sp.Arg(), PromptTimeout: cfg.Claude.PromptTimeout.Duration})
	env := maps.Clone(cfg.Codex.Env)
	if env == nil {
		env = map[string]string{}
	}
	t.PermissionMode = ""
	return m.launch(ctx, t, argv, env, outputs)
}

// codexPath is the PATH a Codex pane runs with: [codex].env's, else the
// daemon's own.
func codexPath(cfg *config.Config) string {
	if p, ok := cfg.Codex.Env["PATH"]; ok {
		return p
	}
	return panePath(&config.Config{})
}
