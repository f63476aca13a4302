// Package daemon is the composition root of the ccbridge command: it parses
// the command line, loads the config, and builds and wires the concrete
// parts (runtime state, gateways). It is the only package that constructs
// them; the hooks never import it.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/ccbridge/ccbridge/internal/config"
)

// Exit codes.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

const usage = `ccbridge drives Claude Code sessions in tmux from Discord.

Usage:
  ccbridge setup [--config FILE]          create or edit the config step by step (token, server, channels)
  ccbridge config check [--config FILE]   check the config and list every problem in it
  ccbridge doctor [--config FILE]         check everything ccbridge needs and say how to fix what is not right
  ccbridge run [--config FILE] [--log-file FILE] [--debug]
                                          connect the bots and serve until stopped
  ccbridge service install|uninstall|status [--config FILE]
                                          run the daemon as a systemd user service (launchd agent on macOS)
  ccbridge mcp [--config FILE]            serve Claude Code sessions to an MCP client over stdio
  ccbridge install-hooks [--settings FILE] [--config FILE]
                                          register the hooks in ~/.claude/settings.json, for
                                          sessions started by hand in a project directory
  ccbridge uninstall-hooks [--settings FILE]
                                          remove them again
  ccbridge version                        print the version (also --version)
  ccbridge help [COMMAND]                 print this, or a command's help (also COMMAND --help)

The config is --config FILE (before or after the command), else $CCBRIDGE_CONFIG,
else ~/.config/ccbridge/config.toml. New here? Run "ccbridge setup".
`

// Main runs the ccbridge command and returns its exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return run(ctx, args, stdout, stderr)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfgPath, args, ok := globalConfig(args)
	if !ok {
		fmt.Fprint(stderr, "ccbridge: --config needs a FILE\n\n"+usage)
		return exitUsage
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	if (args[0] == "help" || args[0] == "-h" || args[0] == "--help") && len(args) > 1 {
		// help COMMAND (and --help COMMAND) is COMMAND --help.
		args = []string{args[1], "--help"}
	}
	args = withConfig(cfgPath, args)
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return exitOK
	case "version", "--version":
		fmt.Fprintln(stdout, "ccbridge", Version())
		return exitOK
	case "run":
		return cmdRun(ctx, args[1:], stdout, stderr)
	case "setup":
		return cmdSetup(ctx, args[1:], stdout, stderr)
	case "doctor":
		return cmdDoctor(ctx, args[1:], stdout, stderr)
	case "service":
		return cmdService(ctx, args[1:], stdout, stderr)
	case "mcp":
		return cmdMCP(ctx, args[1:], stdout, stderr)
	case "install-hooks", "uninstall-hooks":
		return cmdHooks(args[0] == "install-hooks", args[1:], stdout, stderr)
	case "config":
		switch {
		case len(args) >= 2 && args[1] == "check":
			return cmdConfigCheck(args[2:], stdout, stderr)
		case len(args) >= 2 && (args[1] == "-h" || args[1] == "--help" || args[1] == "help"):
			return cmdConfigCheck([]string{"--help"}, stdout, stderr)
		}
		if len(args) >= 2 {
			fmt.Fprintf(stderr, "ccbridge config: unknown action %q\n", args[1])
		}
		fmt.Fprintln(stderr, "usage: ccbridge config check [--config FILE]\nRun \"ccbridge config --help\" for what it does.")
		return exitUsage
	}
	fmt.Fprintf(stderr, "ccbridge: unknown command %q\n\n%s", args[0], usage)
	return exitUsage
}

// flags parses the flags of a command whose only flag is --config.
func flags(name, summary string, args []string, stdout, stderr io.Writer) (cfgPath string, code int, ok bool) {
	fs := newFlags(name, name+" [--config FILE]", summary)
	fs.StringVar(&cfgPath, "config", "", configUsage)
	if code, ok := parseFlags(fs, args, stdout, stderr, name); !ok {
		return "", code, false
	}
	return cfgPath, exitOK, true
}

// loadConfig loads and validates, printing every problem for a person:
// those that keep a value from decoding and those validation finds.
func loadConfig(flagPath string, stderr io.Writer) (*config.Config, bool) {
	path, err := config.DefaultPath(flagPath)
	if err != nil {
		fmt.Fprintln(stderr, "ccbridge:", err)
		return nil, false
	}
	cfg, problems, err := config.LoadAll(path)
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(stderr, "ccbridge: there is no config at %s yet: run `ccbridge setup` to create it\n", path)
		return nil, false
	}
	if err != nil {
		fmt.Fprintln(stderr, "ccbridge:", err)
		return nil, false
	}
	ok := true
	for _, p := range problems {
		if p.Warning {
			fmt.Fprintf(stderr, "warning: %s\n", p)
		} else {
			fmt.Fprintf(stderr, "error: %s\n", p)
			ok = false
		}
	}
	if !ok {
		fmt.Fprintf(stderr, "ccbridge: %s has problems (listed above)\n", path)
	}
	return cfg, ok
}

func cmdConfigCheck(args []string, stdout, stderr io.Writer) int {
	path, code, ok := flags("config check", "Check the config file: every problem is listed in one run (TOML errors, unknown keys with\n"+
		"the key you probably meant, and every invalid value), then what the config resolves to, with tokens\n"+
		"redacted. Exit status 0 when it is usable.", args, stdout, stderr)
	if !ok {
		return code
	}
	cfg, ok := loadConfig(path, stderr)
	if !ok {
		return exitError
	}
	cfg.WriteSummary(stdout)
	fmt.Fprintln(stdout, "config OK")
	return exitOK
}

// version is the release's version, stamped by `make dist` (-ldflags
// "-X github.com/ccbridge/ccbridge/internal/daemon.version=v1.2.3").
var version string

// Version reports the stamped release version, else the module version and
// VCS revision the binary was built from.
func Version() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " (" + s.Value[:12] + ")"
		}
	}
	return v
}
