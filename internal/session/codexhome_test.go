package session

import (
	"path/filepath"
	"testing"

	"github.com/ccbridge/ccbridge/internal/config"
)

// /sessions of a Codex project reads the rollouts of the Codex that
// ccbridge starts: [codex].env's CODEX_HOME, else its HOME's .codex, else
// the daemon's.
func TestCodexHomeIsThePanesOwn(t *testing.T) {
	t.Setenv("CODEX_HOME", "/daemon/codex")
	t.Setenv("HOME", "/daemon/home")
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"CODEX_HOME": "/cfg/codex", "HOME": "/cfg/home"}, "/cfg/codex"},
		{map[string]string{"HOME": "/cfg/home"}, filepath.Join("/cfg/home", ".codex")},
		{nil, "/daemon/codex"},
	} {
		cfg := &config.Config{}
		cfg.Codex.Env = c.env
		if got := CodexHome(cfg); got != c.want {
			t.Errorf("env %v: %q, want %q", c.env, got, c.want)
		}
	}
}
