package session

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ccbridge/ccbridge/internal/config"
)

// CommandError says the configured Claude command cannot be run. Its text
// is short enough for a phone; the PATH it was looked up in (under a
// service manager not the user's shell PATH) goes to the log (LogValue).
type CommandError struct {
	Command string
	Path    string // the PATH the pane gets
	Err     error
	// Key is the config key that sets the command, and Title the agent's
	// name: [claude].command and Claude Code when empty.
	Key, Title string
}

func (e *CommandError) Error() string {
	key, name := "[claude].command", "Claude Code"
	if e.Key != "" {
		key, name = e.Key, e.Title
	}
	switch {
	case !strings.Contains(e.Command, "/"):
		return fmt.Sprintf("%q is not on the PATH the sessions get: install %s there, or set %s to its full path", e.Command, name, key)
	case errors.Is(e.Err, fs.ErrNotExist):
		return fmt.Sprintf("%q does not exist: set %s to the full path of %s", e.Command, key, name)
	}
	return fmt.Sprintf("%q cannot be run (%v): set %s to the full path of %s", e.Command, e.Err, key, name)
}

// LogValue adds the PATH searched, for the log.
func (e *CommandError) LogValue() slog.Value {
	return slog.StringValue(e.Error() + " (PATH=" + e.Path + ")")
}

func (e *CommandError) Unwrap() error { return e.Err }

// ErrBadMode says a session was asked to start in a permission mode Claude
// Code does not have (it would exit at once).
var ErrBadMode = errors.New("not a Claude Code permission mode")

// panePath is the PATH a new pane runs with: [claude].env's, else the
// daemon's own (the tmux server inherits it, see tmux.KeepEnv).
func panePath(cfg *config.Config) string {
	if p, ok := cfg.Claude.Env["PATH"]; ok {
		return p
	}
	return os.Getenv("PATH")
}

// CheckCommand reports whether [claude].command names a program that a new
// pane can run, so a missing one is named at once rather than after the
// start timeout. ccbridge run calls it at start, as doctor does.
func CheckCommand(cfg *config.Config) error { return checkCommand(cfg, findProgram) }

func checkCommand(cfg *config.Config, find func(name, path string) error) error {
	cmd := cfg.Claude.Command
	if cmd == "" {
		cmd = config.DefaultCommand
	}
	path := panePath(cfg)
	if err := find(cmd, path); err != nil {
		return &CommandError{Command: cmd, Path: path, Err: err}
	}
	return nil
}

// findProgram looks name up the way a shell (and tmux's exec) does with
// the given PATH: a name with a slash as it is, else each PATH entry.
func findProgram(name, path string) error {
	if strings.Contains(name, "/") {
		return executable(name)
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		if executable(filepath.Join(dir, name)) == nil {
			return nil
		}
	}
	return errors.New("not on PATH")
}

func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return errors.New("not an executable file")
	}
	return nil
}

// checkMode refuses a permission mode Claude Code would exit on.
func checkMode(mode string) error {
	if mode == "" || slices.Contains(config.PermissionModes, mode) {
		return nil
	}
	return fmt.Errorf("%w: %q (one of %s)", ErrBadMode, mode, strings.Join(config.PermissionModes, ", "))
}
