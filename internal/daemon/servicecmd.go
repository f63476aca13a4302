package daemon

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/execx"
	"github.com/ccbridge/ccbridge/internal/service"
	"github.com/ccbridge/ccbridge/internal/state"
)

const serviceUsage = `Usage: ccbridge service install|uninstall|status [--config FILE]

Run the daemon as a systemd user service (Linux) or a launchd agent (macOS):
restarted when it fails, logging to <state dir>/ccbridge.log (rotated).

  install    write the unit (with PATH for claude and tmux, CCBRIDGE_CONFIG, and the
             token variables the config names, from this shell, in a 0600 file),
             enable it and (re)start it
  uninstall  stop and remove it (sessions running in tmux are left alone)
  status     say whether it is installed and running, and if not, why (exit status 0 when running)

Flags:
  --config FILE  config FILE; else $CCBRIDGE_CONFIG, else ~/.config/ccbridge/config.toml
`

func cmdService(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	verb, rest := serviceVerb(args)
	switch verb {
	case "":
		if slices.ContainsFunc(args, func(a string) bool { return a == "-h" || a == "--help" }) {
			fmt.Fprint(stdout, serviceUsage)
			return exitOK
		}
		fmt.Fprint(stderr, serviceUsage)
		return exitUsage
	case "help":
		fmt.Fprint(stdout, serviceUsage)
		return exitOK
	case "install", "uninstall", "status":
	default:
		fmt.Fprintf(stderr, "ccbridge service: unknown action %q\n\n%s", verb, serviceUsage)
		return exitUsage
	}
	fs := flag.NewFlagSet("service "+verb, flag.ContinueOnError)
	cfgFlag := fs.String("config", "", configUsage)
	fs.Usage = func() { fmt.Fprint(fs.Output(), serviceUsage) }
	if code, ok := parseFlags(fs, rest, stdout, stderr, "service "+verb); !ok {
		return code
	}
	o, err := serviceOptions(*cfgFlag, verb == "install", stderr)
	if err != nil {
		fmt.Fprintln(stderr, "ccbridge service:", err)
		return exitError
	}
	if _, err := os.Stat(o.ConfigPath); verb == "status" && errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(stdout, "there is no config at %s: a service would stop at once; run `ccbridge setup` to create it\n", o.ConfigPath)
	}
	switch verb {
	case "install":
		err = service.Install(ctx, o, stdout)
	case "uninstall":
		err = service.Uninstall(ctx, o, stdout)
	case "status":
		var running bool
		if running, err = service.Status(ctx, o, stdout); err == nil && !running {
			return exitError
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "ccbridge service:", err)
		return exitError
	}
	return exitOK
}

// serviceVerb finds the action among the arguments, which may come after
// a flag ("service --config FILE status"), and returns the rest.
func serviceVerb(args []string) (verb string, rest []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--config" || a == "-config" {
			i++ // its value
			continue
		}
		if strings.HasPrefix(a, "-") {
			continue
		}
		return a, append(append([]string{}, args[:i]...), args[i+1:]...)
	}
	return "", args
}

// serviceOptions describes this machine's service; install also needs a
// config that passes the check.
func serviceOptions(cfgFlag string, install bool, stderr io.Writer) (service.Options, error) {
	o := service.Options{OS: runtime.GOOS, UID: os.Getuid(), Runner: execx.Exec{}, LingerDir: "/var/lib/systemd/linger", Env: map[string]string{}}
	var err error
	if o.Home, err = os.UserHomeDir(); err != nil {
		return o, err
	}
	o.ConfigHome = os.Getenv("XDG_CONFIG_HOME")
	if o.ConfigHome == "" {
		o.ConfigHome = filepath.Join(o.Home, ".config")
	}
	if u, err := user.Current(); err == nil {
		o.User = u.Username
	} else {
		o.User = os.Getenv("USER")
	}
	if o.Exe, err = os.Executable(); err != nil {
		return o, err
	}
	path, err := config.DefaultPath(cfgFlag)
	if err != nil {
		return o, err
	}
	if o.ConfigPath, err = filepath.Abs(path); err != nil {
		return o, err
	}
	o.Socket = config.DefaultSocket
	if cfg, err := config.Load(o.ConfigPath); err == nil {
		o.Socket = cfg.Tmux.Socket
	}
	durable, err := state.DurableDir()
	if err != nil {
		return o, err
	}
	o.LogFile = filepath.Join(durable, "ccbridge.log")
	claude, tmux := "", ""
	if install {
		cfg, ok := loadConfig(o.ConfigPath, stderr)
		if !ok {
			return o, errors.New("fix the config first (ccbridge config check, or ccbridge setup)")
		}
		for _, s := range cfg.Servers {
			if s.TokenEnv != "" {
				o.Env[s.TokenEnv] = os.Getenv(s.TokenEnv)
			}
		}
		if p, err := execx.LookPath(cfg.Claude.Command); err == nil {
			claude, _ = filepath.Abs(p)
		} else {
			fmt.Fprintf(stderr, "warning: %s is not on PATH; the service will not find it either\n", cfg.Claude.Command)
		}
	}
	if p, err := execx.LookPath("tmux"); err == nil {
		tmux, _ = filepath.Abs(p)
	}
	o.Path = service.SearchPath(o.OS, o.Exe, claude, tmux)
	if install {
		o.Env = service.WithShellDirs(o.Env)
	}
	return o, nil
}
