package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/mcp"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/web"
)

// cmdMCP serves the MCP front end on stdin/stdout. It needs no config; with
// one, its [claude] and [tmux] settings apply, so it shares sessions with
// the daemon. SIGINT and SIGTERM (ctx) stop it at once, its queued
// messages left for the next one.
func cmdMCP(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	path, code, ok := flags("mcp", "Serve Claude Code sessions to an MCP client over stdio (claude mcp add ccbridge -- ccbridge mcp).", args, stdout, stderr)
	if !ok {
		return code
	}
	cfg, err := mcpConfig(path)
	if err != nil {
		fmt.Fprintln(stderr, "ccbridge mcp:", err)
		return exitError
	}
	if err := serveMCP(ctx, cfg, stderr); err != nil {
		fmt.Fprintln(stderr, "ccbridge mcp:", err)
		return exitError
	}
	return exitOK
}

// mcpConfig loads the config when one is given or exists, else defaults.
func mcpConfig(flagPath string) (*config.Config, error) {
	path, err := config.DefaultPath(flagPath)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) && flagPath == "" && os.Getenv(config.EnvConfig) == "" {
		return config.Parse("")
	}
	// Only [claude] and [tmux] matter here: no Discord checks.
	return config.Load(path)
}

func serveMCP(ctx context.Context, cfg *config.Config, stderr io.Writer) error {
	store, err := state.OpenStore(state.DefaultRuntimeDir())
	if err != nil {
		return err
	}
	logf, err := store.Dir.OpenLog("mcp.log")
	if err != nil {
		return err
	}
	defer logf.Close()
	log := slog.New(slog.NewJSONHandler(logf, nil)).With("front", "mcp", "pid", os.Getpid())
	store.Dir.SetLogger(log)
	durable, err := state.DurableDir()
	if err != nil {
		return err
	}
	registry, err := state.OpenRegistry(durable)
	if err != nil {
		return err
	}
	registry.Dir.SetLogger(log)
	sessions, err := newSessions(cfg, store, registry, log)
	if err != nil {
		return err
	}
	opts := mcp.Options{Config: cfg, Store: store, Sessions: sessions, Log: log, Version: Version(), Registry: registry}
	if cfg.Web.Enabled() {
		// Links to the daemon's pages, made with the same key (web.go).
		if h, err := webHandler(cfg, store, registry, durable, log); err != nil {
			log.Warn("no web view links", "err", err)
		} else {
			opts.Web = &web.Links{H: h}
		}
	}
	srv := mcp.New(opts)
	// Its Codex sessions' answers are pressed here too: no daemon may run.
	// A press under way when the client goes is finished and recorded
	// before the process exits.
	pctx, stop := context.WithCancel(ctx)
	p := &presser{store: store, press: sessions.PressAnswer, log: log} // keys.go
	ran := make(chan struct{})
	go func() { p.run(pctx); close(ran) }()
	defer func() { stop(); <-ran; p.wait() }()
	log.Info("ccbridge mcp serving", "version", Version(), "config", cfg.Path, "runtime", store.Dir.Root())
	return srv.Run(ctx, &sdk.StdioTransport{})
}
