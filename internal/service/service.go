// Package service is `ccbridge service install|uninstall|status`: it runs
// the daemon as a systemd user service (Linux) or a launchd agent (macOS),
// restarted on failure, logging to a rotated file. Programs run through
// execx.
package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/execx"
	"github.com/ccbridge/ccbridge/internal/state"
)

// Names of what install writes.
const (
	Unit    = "ccbridge.service"
	Label   = "com.github.ccbridge.ccbridge"
	EnvFile = "service.env" // next to the config: the token variables, 0600
)

// Options describe the service to install.
type Options struct {
	OS         string // "linux" or "darwin"
	Home       string
	ConfigHome string // $XDG_CONFIG_HOME or ~/.config
	UID        int
	User       string
	Exe        string // absolute path of the ccbridge binary
	ConfigPath string // absolute
	LogFile    string // <state dir>/ccbridge.log
	// Env is what the daemon needs from the environment besides PATH: the
	// token variables the config names, with their values now.
	Env map[string]string
	// Path is the service's PATH: the directories of ccbridge, claude and
	// tmux first, then the usual system ones.
	Path   string
	Runner execx.Runner
	// LingerDir is /var/lib/systemd/linger (a variable for tests).
	LingerDir string
	// Socket is the config's tmux socket ([tmux].socket), for the advice
	// uninstall gives.
	Socket string
	// SystemdVersion is the version of the user's systemd (0: Install
	// asks systemctl), which decides how the unit backs off restarts.
	SystemdVersion int
}

// UnitPath is where the systemd user unit goes.
func (o Options) UnitPath() string { return filepath.Join(o.ConfigHome, "systemd", "user", Unit) }

// PlistPath is where the launchd agent goes.
func (o Options) PlistPath() string {
	return filepath.Join(o.Home, "Library", "LaunchAgents", Label+".plist")
}

// EnvPath is the systemd environment file holding the token variables.
func (o Options) EnvPath() string { return filepath.Join(filepath.Dir(o.ConfigPath), EnvFile) }

func (o Options) args() []string {
	return []string{o.Exe, "run", "--config", o.ConfigPath, "--log-file", o.LogFile}
}

// SearchPath builds the service's PATH from the directories of the given
// programs (in order, without duplicates) and the usual system ones of goos
// (Homebrew's only on macOS).
func SearchPath(goos string, programs ...string) string {
	var dirs []string
	add := func(d string) {
		if d != "" && d != "." && !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	for _, p := range programs {
		if p != "" {
			add(filepath.Dir(p))
		}
	}
	system := []string{"/usr/local/bin", "/usr/bin", "/bin"}
	if goos == "darwin" {
		system = []string{"/usr/local/bin", "/opt/homebrew/bin", "/usr/bin", "/bin"}
	}
	for _, d := range system {
		add(d)
	}
	return strings.Join(dirs, ":")
}

// shellDirs are the variables that say where tmux keeps its socket and
// ccbridge its runtime dir: the service must see the same values as the
// shell that attaches (`tmux -L ccbridge attach`), else they miss each other.
var shellDirs = []string{"TMUX_TMPDIR", state.EnvRuntimeDir}

// WithShellDirs adds to env the shellDirs set in this process's
// environment, for the service's environment file.
func WithShellDirs(env map[string]string) map[string]string {
	for _, k := range shellDirs {
		if v := os.Getenv(k); v != "" {
			env[k] = v
		}
	}
	return env
}

// sdQuote quotes one word for a systemd unit's ExecStart= or Environment=
// ("%" and "$" are expanded by systemd, so they are doubled).
func sdQuote(s string) string {
	s = strings.ReplaceAll(s, "%", "%%")
	s = strings.ReplaceAll(s, "$", "$$")
	if s != "" && !strings.ContainsAny(s, " \t\"'\\;") {
		return s
	}
	s = strings.ReplaceAll(s, `\`, `\\`)
	s = strings.ReplaceAll(s, `"`, `\"`)
	return `"` + s + `"`
}

// sdPath writes a path for a directive that takes one path as its whole
// value (EnvironmentFile=): no quotes, only specifiers escaped.
func sdPath(s string) string { return strings.ReplaceAll(s, "%", "%%") }

// Restart pacing. Each start of the daemon IDENTIFYs its bots, and Discord
// resets a bot's token past 1000 a day, so a daemon that keeps failing is
// restarted less and less often and, past startLimitBurst starts in an
// hour, not at all until the person looks (`ccbridge service status`).
// systemd 254 added RestartSteps= and RestartMaxDelaySec= (a growing
// delay); older ones would log an unknown key, so they get a fixed, longer
// delay instead.
const (
	restartStepsSince = 254
	startLimitBurst   = 20
)

// SystemdUnit renders the user unit. The token variables are not in it: they
// are in the 0600 EnvironmentFile. KillMode=process: stopping or restarting
// the daemon must leave the tmux server and its Claude sessions running
// (the daemon adopts them when it starts again), as it does in a terminal.
func SystemdUnit(o Options) string {
	var exec []string
	for _, a := range o.args() {
		exec = append(exec, sdQuote(a))
	}
	restart := "RestartSec=30\n"
	if o.SystemdVersion >= restartStepsSince {
		restart = "RestartSec=10\nRestartSteps=8\nRestartMaxDelaySec=10min\n"
	}
	return fmt.Sprintf(`# Written by "ccbridge service install"; "ccbridge service uninstall" removes it.
[Unit]
Description=ccbridge: Discord to Claude Code sessions in tmux
Documentation=https://github.com/ccbridge/ccbridge
StartLimitIntervalSec=1h
StartLimitBurst=%d

[Service]
Type=simple
ExecStart=%s
ExecReload=/bin/kill -HUP $MAINPID
Environment=%s
Environment=%s
EnvironmentFile=-%s
Restart=on-failure
%sKillMode=process

[Install]
WantedBy=default.target
`, startLimitBurst, strings.Join(exec, " "), sdQuote("PATH="+o.Path), sdQuote("CCBRIDGE_CONFIG="+o.ConfigPath), sdPath(o.EnvPath()), restart)
}

// systemdVersion asks systemctl which systemd this is ("systemd 256
// (256.7-1)"); 0 when it cannot tell.
func (o Options) systemdVersion(ctx context.Context) int {
	out, err := o.run(ctx, "systemctl", "--version")
	if err != nil {
		return 0
	}
	f := strings.Fields(out)
	if len(f) < 2 || f[0] != "systemd" {
		return 0
	}
	v, _ := strconv.Atoi(f[1])
	return v
}

// envFile renders the EnvironmentFile: KEY="value" lines.
func envFile(env map[string]string) string {
	var b strings.Builder
	b.WriteString("# The environment of ccbridge's service (ccbridge service install): the bot tokens, and\n" +
		"# TMUX_TMPDIR and CCBRIDGE_RUNTIME_DIR when they were set. Keep this file 0600.\n")
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", "").Replace(env[k])
		fmt.Fprintf(&b, "%s=\"%s\"\n", k, v)
	}
	return b.String()
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;").Replace(s)
}

// LaunchdPlist renders the agent. KeepAlive/SuccessfulExit=false restarts it
// when it fails, at most every 30 s (launchd has no growing delay);
// AbandonProcessGroup keeps the tmux server and its sessions alive when
// the agent stops. It holds the tokens, so it is written 0600.
func LaunchdPlist(o Options) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- Written by "ccbridge service install"; "ccbridge service uninstall" removes it. -->
<plist version="1.0">
<dict>
  <key>Label</key>
  <string>` + Label + `</string>
  <key>ProgramArguments</key>
  <array>
`)
	for _, a := range o.args() {
		b.WriteString("    <string>" + xmlEscape(a) + "</string>\n")
	}
	b.WriteString("  </array>\n  <key>EnvironmentVariables</key>\n  <dict>\n")
	env := map[string]string{"PATH": o.Path, "CCBRIDGE_CONFIG": o.ConfigPath}
	for k, v := range o.Env {
		env[k] = v
	}
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "    <key>%s</key>\n    <string>%s</string>\n", xmlEscape(k), xmlEscape(env[k]))
	}
	errLog := strings.TrimSuffix(o.LogFile, ".log") + ".stderr.log"
	fmt.Fprintf(&b, `  </dict>
  <key>RunAtLoad</key>
  <true/>
  <key>KeepAlive</key>
  <dict>
    <key>SuccessfulExit</key>
    <false/>
  </dict>
  <key>ThrottleInterval</key>
  <integer>30</integer>
  <key>AbandonProcessGroup</key>
  <true/>
  <key>StandardOutPath</key>
  <string>%s</string>
  <key>StandardErrorPath</key>
  <string>%s</string>
</dict>
</plist>
`, xmlEscape(errLog), xmlEscape(errLog))
	return b.String()
}

func (o Options) run(ctx context.Context, args ...string) (string, error) {
	out, err := o.Runner.Run(ctx, execx.Cmd{Args: args})
	return strings.TrimSpace(string(out)), err
}

// startLimitHit reports whether systemctl refused a start because the unit
// hit its start limit.
func startLimitHit(err error) bool {
	return strings.Contains(err.Error(), "start-limit-hit") || strings.Contains(err.Error(), "Start request repeated too quickly")
}

func writeFile(path, text string, perm os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	// A new file of mode perm renamed over the old: the tokens of the env
	// file or plist never sit in an old file others may read, and a crash
	// leaves the old file whole.
	return state.WriteAtomic(path, []byte(text), perm)
}

// Install writes the unit (or plist) and enables and (re)starts it.
func Install(ctx context.Context, o Options, out io.Writer) error {
	for k, v := range o.Env {
		if v == "" {
			fmt.Fprintf(out, "warning: %s is not set here, so the service will not have it: set it and run install again, or use token_file (ccbridge setup)\n", k)
		}
	}
	if err := os.MkdirAll(filepath.Dir(o.LogFile), 0o700); err != nil {
		return fmt.Errorf("log dir: %w", err)
	}
	switch o.OS {
	case "linux":
		if repo := config.GitWorkTree(filepath.Dir(o.EnvPath())); repo != "" && len(o.Env) > 0 {
			fmt.Fprintf(out, "warning: %s is inside the git work tree %s and will hold the bot tokens: keep it out of git "+
				"(.gitignore), or use token_file outside the tree (ccbridge setup does) so there is nothing to copy\n", o.EnvPath(), repo)
		}
		if o.SystemdVersion == 0 {
			o.SystemdVersion = o.systemdVersion(ctx)
		}
		_, statErr := os.Stat(o.UnitPath())
		unitExisted := statErr == nil
		restore, err := writeFiles([]fileWrite{{o.EnvPath(), envFile(o.Env), 0o600}, {o.UnitPath(), SystemdUnit(o), 0o644}})
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "wrote %s\nwrote %s (mode 0600: the token variables)\n", o.UnitPath(), o.EnvPath())
		var reloaded, enabled bool
		for _, args := range [][]string{{"systemctl", "--user", "daemon-reload"}, {"systemctl", "--user", "enable", Unit}, {"systemctl", "--user", "restart", Unit}} {
			if args[2] == "restart" {
				// A unit past its start limit refuses to start until its
				// failed state is reset; one that has none fails this, harmlessly.
				_, _ = o.run(ctx, "systemctl", "--user", "reset-failed", Unit)
			}
			if _, err := o.run(ctx, args...); err != nil {
				hint := fmt.Sprintf("is this a systemd session? `systemctl --user status` tells; without systemd, "+
					"run `ccbridge run --log-file %s` in a tmux window, or under another supervisor", o.LogFile)
				if startLimitHit(err) {
					hint = "systemd stopped starting ccbridge after too many quick restarts: `journalctl --user -u ccbridge` says why it " +
						"kept stopping; fix that, then run `systemctl --user reset-failed ccbridge` and install again"
				}
				err = fmt.Errorf("%s: %w (%s)", strings.Join(args, " "), err, hint)
				if rbErr := o.rollback(ctx, restore, unitExisted, enabled, reloaded); rbErr != nil {
					return fmt.Errorf("%w; undoing the install failed too: %v", err, rbErr)
				}
				if unitExisted {
					return fmt.Errorf("%w; the previous service files are back as they were", err)
				}
				return fmt.Errorf("%w; what install wrote is removed again", err)
			}
			reloaded = reloaded || args[2] == "daemon-reload"
			enabled = enabled || args[2] == "enable"
		}
		fmt.Fprintf(out, "enabled and started %s; logs: %s (and journalctl --user -u ccbridge)\n", Unit, o.LogFile)
		if _, err := os.Stat(filepath.Join(o.LingerDir, o.User)); err != nil {
			fmt.Fprintf(out, "To keep it running while you are logged out and start it at boot, run:\n  loginctl enable-linger %s\n", o.User)
		}
		return nil
	case "darwin":
		restore, err := writeFiles([]fileWrite{{o.PlistPath(), LaunchdPlist(o), 0o600}})
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "wrote %s (mode 0600: it holds the token variables)\n", o.PlistPath())
		domain := fmt.Sprintf("gui/%d", o.UID)
		_, _ = o.run(ctx, "launchctl", "bootout", domain+"/"+Label) // not loaded yet is fine
		if _, err := o.run(ctx, "launchctl", "bootstrap", domain, o.PlistPath()); err != nil {
			if rbErr := restore(); rbErr != nil {
				return fmt.Errorf("launchctl bootstrap: %w; undoing the install failed too: %v", err, rbErr)
			}
			return fmt.Errorf("launchctl bootstrap: %w; the agent's file is back as it was", err)
		}
		fmt.Fprintf(out, "loaded %s; it starts at login; logs: %s\n", Label, o.LogFile)
		return nil
	}
	return fmt.Errorf("services are supported on Linux (systemd) and macOS (launchd), not %s; run `ccbridge run --log-file %s` under your own supervisor", o.OS, o.LogFile)
}

// Uninstall stops and removes the service. The tmux sessions keep running.
func Uninstall(ctx context.Context, o Options, out io.Writer) error {
	var files []string
	switch o.OS {
	case "linux":
		if !anyExists(o.UnitPath(), o.EnvPath()) {
			// Nothing to stop: asking systemctl would only add its noise
			// (no user bus, no such unit) to the answer.
			fmt.Fprintln(out, "no ccbridge service was installed; nothing changed")
			return nil
		}
		if _, err := o.run(ctx, "systemctl", "--user", "disable", "--now", Unit); err != nil {
			fmt.Fprintf(out, "note: %v\n", err)
		}
		files = []string{o.UnitPath(), o.EnvPath()}
	case "darwin":
		if !anyExists(o.PlistPath()) {
			fmt.Fprintln(out, "no ccbridge service was installed; nothing changed")
			return nil
		}
		if _, err := o.run(ctx, "launchctl", "bootout", fmt.Sprintf("gui/%d/%s", o.UID, Label)); err != nil {
			fmt.Fprintf(out, "note: %v\n", err)
		}
		files = []string{o.PlistPath()}
	default:
		return fmt.Errorf("services are supported on Linux and macOS, not %s", o.OS)
	}
	removed := 0
	for _, f := range files {
		if err := os.Remove(f); err == nil {
			fmt.Fprintf(out, "removed %s\n", f)
			removed++
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if o.OS == "linux" {
		if _, err := o.run(ctx, "systemctl", "--user", "daemon-reload"); err != nil {
			fmt.Fprintf(out, "note: %v\n", err)
		}
	}
	if removed == 0 {
		fmt.Fprintln(out, "no ccbridge service was installed; nothing changed")
		return nil
	}
	fmt.Fprintf(out, "the service is removed; sessions already running in tmux are left alone (tmux -L %s kill-server ends them)\n", o.socket())
	return nil
}

func anyExists(paths ...string) bool {
	for _, p := range paths {
		if _, err := os.Lstat(p); err == nil {
			return true
		}
	}
	return false
}

// Status prints the service's state; running is true when it is active.
func Status(ctx context.Context, o Options, out io.Writer) (running bool, err error) {
	var path string
	var args []string
	switch o.OS {
	case "linux":
		path, args = o.UnitPath(), []string{"systemctl", "--user", "status", "--no-pager", Unit}
	case "darwin":
		path, args = o.PlistPath(), []string{"launchctl", "print", fmt.Sprintf("gui/%d/%s", o.UID, Label)}
	default:
		return false, fmt.Errorf("services are supported on Linux and macOS, not %s", o.OS)
	}
	if _, err := os.Stat(path); err != nil {
		fmt.Fprintf(out, "not installed (%s does not exist): ccbridge service install\n", path)
		return false, nil
	}
	fmt.Fprintf(out, "installed: %s\nlog file: %s\n", path, o.LogFile)
	text, err := o.run(ctx, args...)
	if text != "" {
		fmt.Fprintln(out, text)
	}
	var ce *execx.CmdError
	if err != nil && !errors.As(err, &ce) {
		return false, err
	}
	running = err == nil // systemctl status exits 3 when inactive
	if o.OS == "darwin" {
		running = running && strings.Contains(text, "state = running")
	}
	if !running {
		whyNotRunning(o, text+"\n"+errText(err), out)
	}
	return running, nil
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// socket is the tmux socket the sessions run on.
func (o Options) socket() string {
	if o.Socket == "" {
		return "ccbridge"
	}
	return o.Socket
}
