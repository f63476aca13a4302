// Package daemon is the composition root of the ccbridge command: it parses
// the command line, loads the config, and builds and wires the concrete
// parts (runtime state, gateways). It is the only package that constructs
// them; the hooks never import it.
package daemon

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
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
  ccbridge run [--config FILE] [--log-file FILE] [--debug]
                                         connect the bots and serve until stopped
  ccbridge config check [--config FILE]  check the config and print what it resolves to
  ccbridge setup [--config FILE]         create or edit the config step by step (token, server, channels)
  ccbridge doctor [--config FILE]        check everything ccbridge needs and say how to fix what is not right
  ccbridge service install|uninstall|status
                                         run the daemon as a systemd user service (launchd agent on macOS)
  ccbridge mcp [--config FILE]           serve Claude Code sessions to an MCP client over stdio
  ccbridge install-hooks                 register the hooks in ~/.claude/settings.json, for
                                         sessions started by hand in a project directory
  ccbridge uninstall-hooks               remove them again
  ccbridge version                       print the version

The config is --config, else $CCBRIDGE_CONFIG, else ~/.config/ccbridge/config.toml.
Run "ccbridge COMMAND --help" for a command's options.
`

// Main runs the ccbridge command and returns its exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return run(ctx, args, stdout, stderr)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
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
		if len(args) < 2 || args[1] != "check" {
			if len(args) >= 2 && (args[1] == "-h" || args[1] == "--help") {
				fmt.Fprintln(stdout, "Usage: ccbridge config check [--config FILE]")
				return exitOK
			}
			fmt.Fprintln(stderr, "usage: ccbridge config check [--config FILE]")
			return exitUsage
		}
		return cmdConfigCheck(args[2:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "ccbridge: unknown command %q\n\n%s", args[0], usage)
	return exitUsage
}

// flags parses a subcommand's flags; help goes to stdout with exit 0.
func flags(name, summary string, args []string, stdout, stderr io.Writer) (cfgPath string, code int, ok bool) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfgPath, "config", "", "config file (default $CCBRIDGE_CONFIG or ~/.config/ccbridge/config.toml)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: ccbridge %s [--config FILE]\n\n%s\n\n", name, summary)
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args, stdout, stderr, name); !ok {
		return "", code, false
	}
	return cfgPath, exitOK, true
}

// loadConfig loads and validates, printing every problem for a person.
func loadConfig(flagPath string, stderr io.Writer) (*config.Config, bool) {
	path, err := config.DefaultPath(flagPath)
	if err != nil {
		fmt.Fprintln(stderr, "ccbridge:", err)
		return nil, false
	}
	cfg, err := config.Load(path)
	if err != nil {
		fmt.Fprintln(stderr, "ccbridge:", err)
		return nil, false
	}
	ok := true
	for _, p := range cfg.Check() {
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
	path, code, ok := flags("config check", "Check the config file and print what it resolves to, with tokens redacted.", args, stdout, stderr)
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

// Version reports the module version and VCS revision the binary was built from.
func Version() string {
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

// parseFlags parses a command's flags. Help goes to stdout and exits 0; a
// bad flag (already reported by the flag set) or a stray argument is a
// usage error. When ok is false the command returns code.
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer, name string) (code int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			fs.Usage()
			return exitOK, false
		}
		return exitUsage, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "ccbridge %s: unexpected argument %q\n", name, fs.Arg(0))
		return exitUsage, false
	}
	return exitOK, true
}
