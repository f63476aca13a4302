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
  status     say whether it is installed and running (exit status 0 when running)
`

func cmdService(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, serviceUsage)
		return exitUsage
	}
	verb := args[0]
	switch verb {
	case "-h", "--help", "help":
		fmt.Fprint(stdout, serviceUsage)
		return exitOK
	case "install", "uninstall", "status":
	default:
		fmt.Fprintf(stderr, "ccbridge service: unknown action %q\n\n%s", verb, serviceUsage)
		return exitUsage
	}
	fs := flag.NewFlagSet("service "+verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgFlag := fs.String("config", "", "config file (default $CCBRIDGE_CONFIG or ~/.config/ccbridge/config.toml)")
	fs.Usage = func() { fmt.Fprint(fs.Output(), serviceUsage+"\n"); fs.PrintDefaults() }
	if code, ok := parseFlags(fs, args[1:], stdout, stderr, "service "+verb); !ok {
		return code
	}
	o, err := serviceOptions(*cfgFlag, verb == "install", stderr)
	if err != nil {
		fmt.Fprintln(stderr, "ccbridge service:", err)
		return exitError
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
	o.Path = service.SearchPath(o.Exe, claude, tmux)
	return o, nil
}
