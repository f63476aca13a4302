package session

import (
	"time"

	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/config"
)

// conf is what a Manager reads of the config: the config and the hook
// settings built from it. A reload replaces it whole.
type conf struct {
	cfg      *config.Config
	settings claudehook.Settings // the hooks; settingsFor adds a session's policy
}

// Reconfigure makes the sessions started from now on use cfg: the
// [claude] command, args, env, timeouts and the policy. Sessions already
// running keep what they started with: nothing is typed into or restarted
// in a pane.
func (m *Manager) Reconfigure(cfg *config.Config) {
	m.live.Store(&conf{cfg: cfg, settings: claudehook.BridgeSettings(m.opt.HookStop, m.opt.HookPretool, cfg.Claude.PromptTimeout.Duration)})
}

// config is the config in use now.
func (m *Manager) config() *config.Config { return m.live.Load().cfg }

// startTimeout bounds a start: the Options' when set, else the config's.
func (m *Manager) startTimeout() time.Duration {
	if m.opt.StartTimeout != 0 {
		return m.opt.StartTimeout
	}
	if d := m.config().Claude.StartTimeout.Duration; d != 0 {
		return d
	}
	return config.DefaultStartTimeout
}
