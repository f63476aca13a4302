// Package doctor is `ccbridge doctor`: it checks everything ccbridge needs
// (tmux, Claude Code, the config, each bot's token, intent, server and
// channel permissions, the runtime directory, the hook binaries and hooks,
// the daemon) and says how to fix each thing that is not right.
package doctor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/discord"
	"github.com/ccbridge/ccbridge/internal/execx"
	"github.com/ccbridge/ccbridge/internal/state"
)

// Status is a check's outcome.
type Status int

// Outcomes. Only Fail makes doctor exit non-zero.
const (
	OK Status = iota
	Info
	Warn
	Fail
)

func (s Status) String() string {
	return [...]string{"ok", "info", "WARN", "FAIL"}[s]
}

// Result is one check.
type Result struct {
	Name   string
	Status Status
	Detail string
	Fix    string // how to fix it, for Warn and Fail
}

// Env is what doctor looks at; the daemon fills it with the real world.
type Env struct {
	ConfigPath string // resolved
	Runner     execx.Runner
	LookPath   func(string) (string, error)
	RuntimeDir string
	// ClaudeSettings is ~/.claude/settings.json.
	ClaudeSettings string
	// HookBinaries finds ccbridge-hook-stop and ccbridge-hook-pretool.
	HookBinaries func() (stop, pretool string, err error)
	// Timeout bounds each network call and program run (default 20s).
	Timeout time.Duration
	// Environ is the environment the daemon would run with; nil = doctor's.
	Environ []string
	// ServiceEnvFile is the installed service's service.env; when it
	// exists, the service's environment is the daemon's.
	ServiceEnvFile string
}

// Minimum versions.
var (
	MinTmux   = [3]int{3, 2, 0}
	MinClaude = [3]int{2, 0, 45} // the first with the PermissionRequest hook
)

// Run runs every check, prints them to out and returns them.
func Run(ctx context.Context, env Env, out io.Writer) []Result {
	if env.Timeout <= 0 {
		env.Timeout = 20 * time.Second
	}
	d := &doctor{Env: env, out: out}
	d.run(ctx)
	return d.results
}

// Passed reports whether no check failed.
func Passed(rs []Result) bool {
	for _, r := range rs {
		if r.Status == Fail {
			return false
		}
	}
	return true
}

type doctor struct {
	Env
	out     io.Writer
	results []Result
}

func (d *doctor) add(name string, st Status, detail, fix string) {
	r := Result{Name: name, Status: st, Detail: detail, Fix: fix}
	d.results = append(d.results, r)
	// A detail of several lines (config problems) is one per line, aligned.
	fmt.Fprintf(d.out, "%-4s  %-22s %s\n", st, name, strings.ReplaceAll(detail, "\n", "\n"+strings.Repeat(" ", 29)))
	if fix != "" && st >= Warn {
		for _, line := range strings.Split(fix, "\n") {
			fmt.Fprintf(d.out, "      %-22s → %s\n", "", line)
		}
	}
}

func (d *doctor) run(ctx context.Context) {
	cfg := d.config()
	d.tmux(ctx)
	if claude := d.claude(ctx, cfg); claude != "" {
		d.claudeLogin(ctx, cfg, claude) // claude.go
	}
	d.claudeTrust(cfg)
	d.hooks(cfg)
	if cfg != nil {
		for _, s := range cfg.Servers {
			if s.Telegram() {
				d.telegramServer(ctx, cfg, s) // telegram.go
				continue
			}
			d.server(ctx, cfg, s)
		}
	}
	if cfg != nil && cfg.Voice.Enabled() {
		d.voice(ctx, cfg) // voice.go
	}
	d.runtime()
}

func (d *doctor) config() *config.Config {
	c, problems, err := config.LoadAll(d.ConfigPath)
	if errors.Is(err, fs.ErrNotExist) {
		d.add("config", Fail, d.ConfigPath+" does not exist", "run `ccbridge setup` to create it")
		return nil
	}
	if err != nil {
		d.add("config", Fail, err.Error(), "fix the file; `ccbridge config check` lists every problem")
		return nil
	}
	var errs, warns []string
	onlyUnsetTokens := true
	for _, p := range problems {
		if p.Warning {
			warns = append(warns, p.Error())
		} else {
			errs = append(errs, p.Error())
			onlyUnsetTokens = onlyUnsetTokens && strings.HasSuffix(p.Key, ".token_env")
		}
	}
	switch {
	case len(errs) > 0 && onlyUnsetTokens:
		// The file is right; the shell lacks the token.
		d.add("config", Fail, strings.Join(errs, "\n"), "export the variable in this shell, or run `ccbridge setup`, which saves the token in a token_file")
		return c
	case len(errs) > 0:
		fix := "fix it in " + d.ConfigPath
		if len(errs) > 1 {
			fix = "fix these keys in " + d.ConfigPath
		}
		// Setup is offered again only to a config it wrote: a hand-written
		// one loses its comments when setup rewrites it.
		if text, err := os.ReadFile(d.ConfigPath); err == nil && config.WrittenBySetup(text) {
			fix += " (or re-run `ccbridge setup`)"
		}
		d.add("config", Fail, strings.Join(errs, "\n"), fix)
		return c // the Discord checks still help
	case len(warns) > 0:
		d.add("config", Warn, strings.Join(warns, "\n"), "see `ccbridge config check`")
	default:
		d.add("config", OK, d.ConfigPath, "")
	}
	return c
}

func (d *doctor) exec(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, d.Timeout)
	defer cancel()
	out, err := d.Runner.Run(ctx, execx.Cmd{Args: args})
	return strings.TrimSpace(string(out)), err
}

var versionRE = regexp.MustCompile(`(\d+)\.(\d+)(?:\.(\d+))?`)

// parseVersion returns the first x.y[.z] in s.
func parseVersion(s string) ([3]int, bool) {
	m := versionRE.FindStringSubmatch(s)
	if m == nil {
		return [3]int{}, false
	}
	var v [3]int
	for i := range 3 {
		v[i], _ = strconv.Atoi(m[i+1])
	}
	return v, true
}

func less(a, b [3]int) bool {
	for i := range 3 {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

func vstr(v [3]int) string { return fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2]) }

func (d *doctor) tmux(ctx context.Context) {
	path, err := d.LookPath("tmux")
	if err != nil {
		d.add("tmux", Fail, "not found on PATH", "install tmux 3.2 or newer (e.g. apt-get install tmux, brew install tmux)")
		return
	}
	out, err := d.exec(ctx, path, "-V")
	if err != nil {
		d.add("tmux", Fail, "`tmux -V` failed: "+err.Error(), "reinstall tmux 3.2 or newer")
		return
	}
	v, ok := parseVersion(out)
	switch {
	case !ok:
		d.add("tmux", Warn, fmt.Sprintf("cannot read the version from %q", out), "ccbridge needs tmux 3.2 or newer")
	case less(v, MinTmux):
		d.add("tmux", Fail, out+" is too old", "install tmux 3.2 or newer (per-pane environment, bracketed paste)")
	default:
		d.add("tmux", OK, out+" ("+path+")", "")
	}
}

// claude checks Claude Code and returns its path if it runs.
func (d *doctor) claude(ctx context.Context, cfg *config.Config) string {
	cmd := config.DefaultCommand
	if cfg != nil && cfg.Claude.Command != "" {
		cmd = cfg.Claude.Command
	}
	path, err := d.LookPath(cmd)
	if err != nil {
		d.add("claude", Fail, fmt.Sprintf("%q not found", cmd),
			"install Claude Code (npm install -g @anthropic-ai/claude-code) or set [claude].command to its path")
		return ""
	}
	out, err := d.exec(ctx, path, "--version")
	if err != nil {
		d.add("claude", Fail, "`claude --version` failed: "+err.Error(), "reinstall Claude Code")
		return ""
	}
	v, ok := parseVersion(out)
	switch {
	case !ok:
		d.add("claude", Warn, fmt.Sprintf("cannot read the version from %q", out), "ccbridge needs Claude Code "+vstr(MinClaude)+" or newer")
	case less(v, MinClaude):
		d.add("claude", Warn, fmt.Sprintf("%s is older than %s, the first with the PermissionRequest hook: permission prompts will not reach Discord", vstr(v), vstr(MinClaude)),
			"update Claude Code: claude update (or npm install -g @anthropic-ai/claude-code)")
	default:
		d.add("claude", OK, vstr(v)+" ("+path+")", "")
	}
	return path
}

// hooks checks the hook binaries (needed) and the install-hooks state
// (needed only for sessions started by hand).
func (d *doctor) hooks(cfg *config.Config) {
	stop, pretool, err := d.HookBinaries()
	if err != nil {
		d.add("hook binaries", Fail, err.Error(), "install ccbridge-hook-stop and ccbridge-hook-pretool next to ccbridge (./install.sh)")
		return
	}
	d.add("hook binaries", OK, stop+", "+pretool, "")
	doc, err := os.ReadFile(d.ClaudeSettings)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		d.add("install-hooks", Warn, err.Error(), "check "+d.ClaudeSettings)
		return
	}
	timeout := config.DefaultPromptTimeout
	if cfg != nil {
		timeout = cfg.Claude.PromptTimeout.Duration
	}
	_, changed, err := claudehook.AddGlobalHooks(doc, stop, pretool, timeout)
	switch {
	case err != nil:
		d.add("install-hooks", Warn, d.ClaudeSettings+": "+err.Error(), "fix the JSON of "+d.ClaudeSettings)
	case !changed:
		d.add("install-hooks", OK, "registered in "+d.ClaudeSettings, "")
	case strings.Contains(string(doc), "ccbridge-hook-"):
		d.add("install-hooks", Warn, "registered in "+d.ClaudeSettings+" but for other binaries or settings",
			"run `ccbridge install-hooks` again")
	default:
		d.add("install-hooks", Info, "not registered: sessions you start by hand will not report to Discord (ccbridge install-hooks)", "")
	}
}

func (d *doctor) server(ctx context.Context, cfg *config.Config, s config.Server) {
	name := "bot " + s.Name
	token, err := s.ResolveToken()
	if err != nil {
		d.add(name, Fail, "no token: "+err.Error(), "set the token as the config says (token_env or token_file), or re-run `ccbridge setup`")
		return
	}
	client, err := discord.NewClient(cfg.Discord.APIBase, token)
	if err != nil {
		d.add(name, Fail, err.Error(), "fix [discord].api_base")
		return
	}
	cctx, cancel := context.WithTimeout(ctx, d.Timeout)
	defer cancel()
	// Said before the wait: a network that does not answer takes Timeout.
	fmt.Fprintf(d.out, "%-4s  %-22s checking with Discord (%s)…\n", "…", name, cfg.Discord.APIBase)
	id, user, err := client.Me(cctx)
	if err != nil {
		if discord.IsAuth(err) {
			d.add(name, Fail, fmt.Sprintf("Discord refused the token (HTTP %d)", discord.HTTPStatus(err)),
				"copy a fresh token (Developer Portal → Bot → Reset Token) and run `ccbridge setup`")
		} else {
			d.add(name, Fail, "cannot reach Discord: "+err.Error(), "check the network or [discord].api_base")
		}
		return
	}
	d.add(name, OK, fmt.Sprintf("token works: %s (id %s)", user, id), "")
	app, err := client.Application(cctx)
	switch {
	case err != nil:
		d.add(name+" intents", Fail, err.Error(), "check the token")
	case !app.MessageContent():
		d.add(name+" intents", Fail, discord.MessageContentOff, discord.EnableMessageContent(app.ID))
	default:
		d.add(name+" intents", OK, "Message Content enabled", "")
	}
	invite := discord.InviteURL(id)
	if app.ID != "" {
		invite = discord.InviteURL(app.ID)
	}
	guilds, err := client.Guilds(cctx)
	if err != nil {
		d.add(name+" server", Fail, err.Error(), "check the network or [discord].api_base, then run doctor again")
		return
	}
	in := false
	for _, g := range guilds {
		in = in || g.ID == s.GuildID
	}
	if !in {
		d.add(name+" server", Fail, fmt.Sprintf("the bot is not in the server %s (guild_id)", s.GuildID), "invite it: "+invite)
		return
	}
	perms, err := client.ChannelPerms(cctx, s.GuildID)
	if err != nil {
		d.add(name+" server", Fail, err.Error(), "check guild_id and that the bot may read the server's channels (re-invite: "+invite+")")
		return
	}
	d.add(name+" server", OK, "in server "+s.GuildID, "")
	type mapped struct {
		what, id string
		need     []discord.Permission
	}
	var channels []mapped
	if s.GeneralChannelID != "" {
		channels = append(channels, mapped{"panel", s.GeneralChannelID, discord.PanelNeeded})
	}
	defer d.privacy(name, s, perms)
	for _, p := range s.Projects {
		channels = append(channels, mapped{"project " + p.Name, p.ChannelID, discord.Needed})
	}
	for _, c := range channels {
		ch, ok := perms[c.id]
		check := name + " " + c.what
		switch missing := discord.MissingOf(ch.Perms, c.need); {
		case !ok:
			d.add(check, Fail, "channel "+c.id+" is not in the server (deleted, or a wrong id)", "fix its channel id, or re-run `ccbridge setup`")
		case len(missing) > 0:
			d.add(check, Fail, "#"+ch.Name+": the bot lacks "+strings.Join(missing, ", "),
				"in Discord: #"+ch.Name+" → Edit Channel → Permissions → the bot's role → allow them (or re-invite: "+invite+")")
		default:
			d.add(check, OK, "#"+ch.Name+": every permission ccbridge needs", "")
		}
	}
	if ch, ok := perms[s.GeneralChannelID]; ok && len(s.OpenRoots) > 0 {
		d.openInPanel(name, ch, invite)
	}
}

// openInPanel checks the panel channel for what /open needs there: it
// starts a private thread (or, in a channel hidden from @everyone, a public
// one if it must), adds the owners, posts, reacts and attaches files in it,
// and archives it on /close.
func (d *doctor) openInPanel(name string, ch discord.TextChannel, invite string) {
	missing := discord.MissingOf(ch.Perms, discord.OpenNeeded[1:])
	private := ch.Perms&discord.PermCreatePrivateThreads != 0
	public := ch.Perms&discord.PermCreatePublicThreads != 0
	if !private && (ch.Public || !public) {
		missing = append([]string{discord.CreatePrivateThreads.Name}, missing...)
	}
	if len(missing) == 0 {
		d.add(name+" panel /open", OK, "#"+ch.Name+": every permission /open needs", "")
		return
	}
	d.add(name+" panel /open", Warn, "#"+ch.Name+": /open there fails: the bot lacks "+strings.Join(missing, ", "),
		"in Discord: #"+ch.Name+" → Edit Channel → Permissions → the bot's role → allow them (or re-invite: "+invite+")")
}

// privacy warns about project channels every member of the server can
// read: everything ccbridge posts there (commands on cards, /screen, diffs,
// replies) is theirs to read too; and about such a panel channel where
// /open works.
func (d *doctor) privacy(name string, s config.Server, perms map[string]discord.TextChannel) {
	if ch, ok := perms[s.GeneralChannelID]; ok && len(s.OpenRoots) > 0 {
		if ch.Public {
			d.add(name+" panel privacy", Warn, "#"+ch.Name+": every member of the server can read it, and /open works there (open_roots): "+
				"its threads are private (the owners, and members with Manage Threads, see them), but the folders opened are named in its answers and in the panel",
				"in Discord: #"+ch.Name+" → Edit Channel → Permissions → @everyone → View Channel off; allow yourself and the bot (or use /open in project channels only)")
		} else {
			d.add(name+" panel privacy", OK, "#"+ch.Name+": hidden from @everyone", "")
		}
	}
	for _, p := range s.Projects {
		ch, ok := perms[p.ChannelID]
		switch {
		case !ok:
		case ch.Public:
			d.add(name+" project "+p.Name+" privacy", Warn, "#"+ch.Name+": every member of the server can read it, and everything ccbridge posts there",
				"in Discord: #"+ch.Name+" → Edit Channel → Permissions → @everyone → View Channel off; allow yourself and the bot")
		default:
			d.add(name+" project "+p.Name+" privacy", OK, "#"+ch.Name+": hidden from @everyone", "")
		}
	}
}

func (d *doctor) runtime() {
	root := d.RuntimeDir
	if _, err := os.Lstat(root); errors.Is(err, fs.ErrNotExist) {
		d.add("runtime dir", OK, root+" (created when the daemon starts)", "")
		d.add("daemon", Info, "not running (start it: `ccbridge run`, or `ccbridge service install`)", "")
		return
	}
	dir, err := state.Open(root)
	if err != nil {
		d.add("runtime dir", Fail, err.Error(), "remove "+root+" (or fix its owner and mode 0700), or set "+state.EnvRuntimeDir)
		return
	}
	d.add("runtime dir", OK, root, "")
	unlock, err := dir.LockDaemon()
	switch {
	case errors.Is(err, state.ErrDaemonRunning):
		d.add("daemon", OK, "running", "")
	case err != nil:
		d.add("daemon", Warn, err.Error(), "")
	default:
		_ = unlock()
		d.add("daemon", Info, "not running (start it: `ccbridge run`, or `ccbridge service install`)", "")
	}
}
