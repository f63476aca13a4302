package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/gateway"
	"github.com/ccbridge/ccbridge/internal/state"
)

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	path, code, ok := flags("run", "Connect every configured bot and serve until interrupted.", args, stdout, stderr)
	if !ok {
		return code
	}
	cfg, ok := loadConfig(path, stderr)
	if !ok {
		return exitError
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	if err := serve(ctx, log, cfg); err != nil {
		fmt.Fprintln(stderr, "ccbridge:", err)
		return exitError
	}
	return exitOK
}

// serve runs the daemon until ctx ends.
func serve(ctx context.Context, log *slog.Logger, cfg *config.Config) (err error) {
	store, err := state.OpenStore(state.DefaultRuntimeDir())
	if err != nil {
		return err
	}
	unlock, err := store.Dir.LockDaemon()
	if err != nil {
		return err
	}
	defer unlock()
	log.Info("ccbridge starting", "version", Version(), "config", cfg.Path, "runtime", store.Dir.Root())

	var bots []*gateway.Bot
	defer func() {
		var errs []error
		for _, b := range bots {
			errs = append(errs, b.Close())
		}
		err = errors.Join(err, errors.Join(errs...))
	}()
	for _, srv := range cfg.Servers {
		b, err := gateway.Open(ctx, log, cfg.Discord.APIBase, srv)
		if err != nil {
			return err
		}
		bots = append(bots, b)
	}
	log.Info("ccbridge running", "bots", len(bots), "attach", "tmux -L "+cfg.Tmux.Socket+" attach", "projects", projectNames(cfg))
	<-ctx.Done()
	log.Info("ccbridge stopping")
	return nil
}

func projectNames(cfg *config.Config) string {
	var names []string
	for _, s := range cfg.Servers {
		for _, p := range s.Projects {
			names = append(names, s.Name+"/"+p.Name)
		}
	}
	return strings.Join(names, ",")
}
