package daemon

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/doctor"
	"github.com/ccbridge/ccbridge/internal/execx"
	"github.com/ccbridge/ccbridge/internal/service"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
)

func cmdDoctor(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	path, code, ok := flags("doctor", "Check tmux, Claude Code, the config, each bot (token, intents, server, channel permissions),\n"+
		"the runtime directory, the hooks and the daemon, and say how to fix what is wrong.\n"+
		"Exit status 0 only when everything ccbridge needs works.", args, stdout, stderr)
	if !ok {
		return code
	}
	path, err := config.DefaultPath(path)
	if err != nil {
		fmt.Fprintln(stderr, "ccbridge:", err)
		return exitError
	}
	home, _ := os.UserHomeDir()
	rs := doctor.Run(ctx, doctor.Env{ConfigPath: path, Runner: execx.Exec{}, LookPath: execx.LookPath, RuntimeDir: state.DefaultRuntimeDir(),
		ClaudeSettings: filepath.Join(home, ".claude", "settings.json"), HookBinaries: session.HookBinaries,
		ServiceEnvFile: filepath.Join(filepath.Dir(path), service.EnvFile)}, stdout)
	if !doctor.Passed(rs) {
		fmt.Fprintln(stdout, "\nSome checks failed; each says how to fix it.")
		return exitError
	}
	fmt.Fprintln(stdout, "\nEverything ccbridge needs works.")
	return exitOK
}
