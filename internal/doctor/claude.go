package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/execx"
	"github.com/ccbridge/ccbridge/internal/tmux"
)

// authTimeout bounds `claude auth status`, which reads local files only.
const authTimeout = 15 * time.Second

// serviceKeep is what a service manager gives the daemon of the user's
// environment besides the unit's own variables.
var serviceKeep = []string{"HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_*", "TZ", "TMPDIR", "XDG_*", "PATH"}

// keyVars make Claude Code use an API key, a token or another provider
// instead of a login.
var keyVars = []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN",
	"CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY"}

// sessionEnv is the environment a session's Claude gets: the daemon's (the
// service's when one is installed: what service.env holds, not this
// shell's), cut to what reaches the tmux server, with [claude].env on top.
func (d *doctor) sessionEnv(cfg *config.Config) (env []string, service bool) {
	base := d.Environ
	if base == nil {
		base = os.Environ()
	}
	if vars, err := readServiceEnv(d.ServiceEnvFile); err == nil {
		base = append(execx.ChildEnv(base, serviceKeep), vars...)
		service = true
	}
	var extra []string
	if cfg != nil {
		for k, v := range cfg.Claude.Env {
			extra = append(extra, k+"="+v)
		}
		slices.Sort(extra)
	}
	return execx.ChildEnv(base, tmux.KeepEnv, extra...), service
}

// readServiceEnv reads the KEY="value" lines `ccbridge service install`
// writes.
func readServiceEnv(path string) ([]string, error) {
	if path == "" {
		return nil, os.ErrNotExist
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var vars []string
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSpace(line)
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		if u, err := strconv.Unquote(v); err == nil {
			v = u
		}
		vars = append(vars, k+"="+v)
	}
	return vars, nil
}

func lookup(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val // the last one wins, as for exec
		}
	}
	return v
}

// claudeDirs are Claude Code's config directory and its global config
// file (~/.claude and ~/.claude.json, or under CLAUDE_CONFIG_DIR).
func claudeDirs(env []string) (dir, global string) {
	if d := lookup(env, "CLAUDE_CONFIG_DIR"); d != "" {
		return d, filepath.Join(d, ".claude.json")
	}
	home := lookup(env, "HOME")
	return filepath.Join(home, ".claude"), filepath.Join(home, ".claude.json")
}

// authStatus is what `claude auth status --json` prints.
type authStatus struct {
	LoggedIn     *bool  `json:"loggedIn"`
	AuthMethod   string `json:"authMethod"`
	APIKeySource string `json:"apiKeySource"`
}

// claudeLogin checks that Claude can authenticate in the sessions: a turn
// without it fails with "Not logged in · Please run /login", which nobody
// can do from a phone. Claude's own `auth status` (offline, local files)
// decides; a Claude without it is judged by the files and variables it
// reads.
func (d *doctor) claudeLogin(ctx context.Context, cfg *config.Config, claude string) {
	env, service := d.sessionEnv(cfg)
	where := "HOME=" + lookup(env, "HOME")
	if service {
		where += ", the service's environment"
	}
	ctx, cancel := context.WithTimeout(ctx, min(d.Timeout, authTimeout))
	defer cancel()
	// It exits 1 when not logged in: its JSON decides, not the exit.
	out, _ := d.Runner.Run(ctx, execx.Cmd{Args: []string{claude, "auth", "status", "--json"}, Env: env})
	var st authStatus
	var how string
	switch jerr := json.Unmarshal(out, &st); {
	case jerr == nil && st.LoggedIn != nil && *st.LoggedIn:
		how = st.AuthMethod
		if st.APIKeySource != "" {
			how = "API key from " + st.APIKeySource
		}
	case jerr == nil && st.LoggedIn != nil:
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		d.add("claude login", Warn, fmt.Sprintf("`claude auth status` did not answer in %s", min(d.Timeout, authTimeout)), "run `claude auth status` by hand")
		return
	default:
		how = loginFiles(env)
	}
	if how != "" {
		d.add("claude login", OK, fmt.Sprintf("%s (%s)", how, where), "")
		return
	}
	who := lookup(env, "USER")
	if u, err := user.Current(); who == "" && err == nil {
		who = u.Username
	}
	if who == "" {
		who = "the user that runs ccbridge"
	}
	keyAt := "[claude].env"
	if service {
		keyAt += " (or in " + d.ServiceEnvFile + ")"
	}
	d.add("claude login", Warn, fmt.Sprintf("Claude Code has no login or API key for the sessions (%s): every turn would fail with \"Not logged in\"", where),
		fmt.Sprintf("on this machine, as %s: run `claude` and log in with /login\nor set ANTHROPIC_API_KEY in %s, then restart ccbridge", who, keyAt))
}

// loginFiles says how Claude would authenticate with env, judged by what
// it reads: a variable, a login's credentials, an apiKeyHelper; "" if
// nothing.
func loginFiles(env []string) string {
	for _, k := range keyVars {
		if lookup(env, k) != "" {
			return k
		}
	}
	dir, global := claudeDirs(env)
	if _, err := os.Stat(filepath.Join(dir, ".credentials.json")); err == nil {
		return "claude.ai login (" + filepath.Join(dir, ".credentials.json") + ")"
	}
	var g struct {
		OAuthAccount json.RawMessage `json:"oauthAccount"`
	}
	if b, err := os.ReadFile(global); err == nil && json.Unmarshal(b, &g) == nil && len(g.OAuthAccount) > 0 && string(g.OAuthAccount) != "null" {
		return "claude.ai login (" + global + ")"
	}
	var s struct {
		APIKeyHelper string `json:"apiKeyHelper"`
	}
	if b, err := os.ReadFile(filepath.Join(dir, "settings.json")); err == nil && json.Unmarshal(b, &s) == nil && s.APIKeyHelper != "" {
		return "apiKeyHelper"
	}
	return ""
}

// claudeTrust lists the mapped project folders Claude never trusted (its
// ~/.claude.json projects[dir].hasTrustDialogAccepted, for the folder or a
// parent): their first start shows Claude's trust question, answered from
// the channel. Information only: that works, it just asks first.
func (d *doctor) claudeTrust(cfg *config.Config) {
	if cfg == nil {
		return
	}
	env, _ := d.sessionEnv(cfg)
	_, global := claudeDirs(env)
	var g struct {
		Projects map[string]struct {
			Trusted bool `json:"hasTrustDialogAccepted"`
		} `json:"projects"`
	}
	if b, err := os.ReadFile(global); err == nil {
		_ = json.Unmarshal(b, &g) // unreadable: nothing is trusted
	}
	trusted := func(dir string) bool {
		for {
			if g.Projects[dir].Trusted {
				return true
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				return false
			}
			dir = parent
		}
	}
	var never []string
	for _, s := range cfg.Servers {
		for _, p := range s.Projects {
			dir, err := p.ProjectPath()
			if err != nil {
				continue
			}
			real, err := filepath.EvalSymlinks(dir)
			if err != nil {
				real = dir
			}
			if !trusted(dir) && !trusted(real) {
				never = append(never, fmt.Sprintf("%s (%s)", p.Name, dir))
			}
		}
	}
	if len(never) == 0 {
		d.add("claude trust", OK, "Claude trusts every project folder", "")
		return
	}
	d.add("claude trust", Info, "Claude never trusted "+strings.Join(never, ", ")+
		": the first start there shows Claude's question in the channel (answer \"Yes, I trust this folder\")", "")
}
