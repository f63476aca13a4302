package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/discord"
	"github.com/ccbridge/ccbridge/internal/execx"
	"github.com/ccbridge/ccbridge/internal/gateway"
	"github.com/ccbridge/ccbridge/internal/guard"
	"github.com/ccbridge/ccbridge/internal/panel"
	"github.com/ccbridge/ccbridge/internal/router"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/telegram"
	"github.com/ccbridge/ccbridge/internal/tmux"
	"github.com/ccbridge/ccbridge/internal/web"
	"github.com/ccbridge/ccbridge/internal/worktree"
)

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	hup := catchHUP() // reload.go; before anything that could be slow
	defer signal.Stop(hup)
	path, logFile, debug, code, ok := runFlags(args, stdout, stderr)
	if !ok {
		return code
	}
	out, closeLog, err := runOutput(stderr, logFile)
	if err != nil {
		fmt.Fprintln(stderr, "ccbridge:", err)
		return exitError
	}
	defer closeLog()
	stderr = out
	cfg, ok := loadConfig(path, stderr)
	if !ok {
		return exitError
	}
	log := newLogger(stderr, debug)
	if err := serve(ctx, log, cfg, hup); err != nil {
		fmt.Fprintln(stderr, "ccbridge:", err)
		return exitError
	}
	return exitOK
}

// serve runs the daemon until ctx ends.
func serve(ctx context.Context, log *slog.Logger, cfg *config.Config, hup chan os.Signal) (err error) {
	store, err := state.OpenStore(state.DefaultRuntimeDir())
	if err != nil {
		return err
	}
	unlock, err := store.Dir.LockDaemon()
	if err != nil {
		return err
	}
	defer unlock()
	store.Dir.SetLogger(log)
	discord.RouteLogs(log)
	// Stopped with a cause when the runtime dir is no longer ours.
	ctx, stopUnsafe := context.WithCancelCause(ctx)
	defer stopUnsafe(nil)
	go guardRuntime(ctx, store.Dir, log, stopUnsafe, verifyEvery, touchEvery)
	durable, err := state.DurableDir()
	if err != nil {
		return err
	}
	instance, err := state.InstanceID(durable)
	if err != nil {
		return err
	}
	registry, err := state.OpenRegistry(durable)
	if err != nil {
		return err
	}
	registry.Dir.SetLogger(log)
	log.Info("ccbridge starting", "version", Version(), "machine", cfg.General.Machine, "config", cfg.Path, "runtime", store.Dir.Root(), "instance", instance)

	// posters post as each server's bot; readers read Discord back
	// (catch-up, panels), which only Discord's client does.
	posters, readers := map[string]chat.Poster{}, map[string]*discord.Poster{}
	if err := forgetBotTokens(ctx, store); err != nil {
		return err
	}
	tg := &telegramBots{log: log, posters: map[string]*telegram.Poster{}} // telegram.go
	tgState, err := state.OpenTelegram(registry.Dir)
	if err != nil {
		return err
	}
	for _, srv := range cfg.Servers {
		token, err := srv.ResolveToken()
		if err != nil {
			return fmt.Errorf("server %s: %w", srv.Name, err)
		}
		var p chat.Poster
		if srv.Telegram() {
			tp, err := telegram.NewPoster(cfg.Telegram.APIBase, token, srv.Name, tgState)
			if err != nil {
				return fmt.Errorf("server %s: %w", srv.Name, err)
			}
			p, tg.posters[srv.Name] = tp, tp
		} else {
			dp, err := discord.NewPoster(cfg.Discord.APIBase, token)
			if err != nil {
				return err
			}
			dp.Guild = srv.GuildID
			p, readers[srv.Name] = dp, dp
		}
		posters[srv.Name] = p
		// The hooks find the bot here and post as it through the daemon
		// (relaysock.go): its token stays with the daemon.
		if _, err := store.Bots.Update(ctx, srv.Name, func(b *state.Bot) error {
			b.Instance, b.PromptTimeout, b.Limit = instance, cfg.Claude.PromptTimeout.Duration, p.Limit()
			return nil
		}); err != nil {
			return err
		}
	}
	// Before any pane can start (Reconcile adopts running ones): their
	// hooks post through it. Until it serves, they queue in the outbox.
	relaySock, err := serveRelay(store, posters, log)
	if err != nil {
		return err
	}
	defer relaySock.Close()

	if err := writeRoutes(ctx, store, cfg); err != nil {
		return err
	}
	ext, err := state.OpenExtras(store.Dir) // attention.go
	if err != nil {
		return err
	}
	if err := writePrefs(ctx, ext, cfg); err != nil {
		return err
	}
	if err := writePolicies(ctx, store, cfg, durable); err != nil {
		return err
	}
	setRedaction(cfg) // policy.go
	sessions, err := newSessions(cfg, store, registry, log)
	if err != nil {
		return err
	}
	if adopted, gone, err := sessions.Reconcile(ctx); err != nil {
		log.Warn("reconcile sessions", "err", err)
	} else if adopted+gone > 0 {
		log.Info("sessions reconciled", "adopted", adopted, "gone", gone)
	}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	rep := &replier{posters: posters}
	trees := worktree.New(execx.Exec{})
	fleet := panel.NewFleet(cfg.General.Machine, cfg.General.UnreachableAfter.Duration)
	pnl := &panel.Panel{Config: cfg, Store: store, Registry: registry, Sessions: sessions, Trees: trees, Instance: instance, Fleet: fleet}
	if err := session.CheckCommand(cfg); err != nil {
		// Said at once, here and in the panel, not at the first message.
		log.Warn("Claude cannot be started", "err", err)
		pnl.Problem = "Claude cannot be started: " + err.Error()
	}
	recording := recordingSessions{sessions, ext, log}  // attention.go
	live, err := newLiveDrawer(store.Dir, posters, log) // live.go
	if err != nil {
		return err
	}
	cursors, err := state.OpenCursors(registry.Dir)
	if err != nil {
		return err
	}
	opts := router.Options{Config: cfg, Sessions: recording, Replier: rep, Store: store, Registry: registry, Panel: pnl, Log: log, Instance: instance, Fleet: fleet,
		Land: worktree.New(execx.Exec{}), History: history{readers, tg.posters}, Cursors: cursors, AgentTitle: agentTitle, ResumeHint: resumeHint} // catchup.go
	view, links := startWeb(cfg, store, registry, durable, log) // web.go
	opts.Web = links
	var served *web.Links // the view that runs, for reloads of its link_ttl
	if view != nil {
		defer view.Close()
		served, _ = links.(*web.Links)
		pnl.Web = true
	}
	rt := router.New(runCtx, opts)
	bindings, err := state.OpenBindings(registry.Dir)
	if err != nil {
		return err
	}
	relay := &relay{store: store, registry: registry, sessions: sessions, posters: posters, readers: readers, log: log, unknownLogged: map[string]bool{},
		guard: guard.New(bindings)}
	att := &attention{store: store, ext: ext, cfg: cfg, posters: posters, log: log, now: time.Now, sessions: recording}
	parts := &liveParts{store: store, ext: ext, durable: durable, cur: cfg, sessions: sessions, router: rt, panel: pnl, attention: att, web: served, log: log} // reload.go
	loops := []func(context.Context){relay.drainOutbox, relay.showTyping, relay.sweepRequests, relay.rememberConversations, relay.watchWorktrees,
		func(ctx context.Context) { relay.keepPanels(ctx, pnl) }, att.loop, live.loop,
		sessions.WatchDialogs,    // dialogs a running Claude opens that no hook reports
		sessions.WatchTurnErrors, // Codex turns an API error ended, which no hook reports
		relay.pressAnswers,       // Codex's cards, answered with its dialog's keys (keys.go)
		newReloader(cfg, hup, log, parts.apply, rep.Send).run}
	done := make(chan struct{}, len(loops))
	for _, loop := range loops {
		go func() { loop(runCtx); done <- struct{}{} }()
	}
	defer func() {
		cancel()
		rt.Wait()
		for range loops {
			<-done
		}
	}()

	bots := &connector{log: log, apiBase: cfg.Discord.APIBase, report: pnl.SetConnectProblem, // connect.go
		open: func(ctx context.Context, srv config.Server) (*gateway.Bot, error) {
			return gateway.Open(ctx, log, cfg.Discord.APIBase, srv, rt, router.Commands())
		}}
	defer func() { err = errors.Join(err, bots.close()) }()
	if err := bots.connectAll(ctx, discordServers(cfg)); err != nil {
		return err
	}
	tg.report = pnl.SetConnectProblem
	tg.start(runCtx, cfg, rt)
	defer func() { cancel(); tg.wait() }() // the bots stop with runCtx
	rt.StartConfigured()
	rt.FinishArchivedThreads()
	rt.StartScheduler() // runs missed schedules at most an hour late, then each when due
	log.Info("ccbridge running", "bots", bots.connected(), "telegram_bots", len(tg.posters), "attach", "tmux -L "+cfg.Tmux.Socket+" attach", "projects", projectNames(cfg))
	// What start-up left (config and state reads, the bots' handshakes, the
	// commands' registration, stacks grown on the way) is collected and given
	// back to the OS once: an idle daemon keeps only what it holds
	// (BenchmarkDaemonIdleRSS).
	debug.FreeOSMemory()
	<-ctx.Done()
	if cause := context.Cause(ctx); errors.Is(cause, state.ErrUnsafeDir) {
		return cause
	}
	log.Info("ccbridge stopping")
	return nil
}

// connectError says why a bot could not connect as setup and doctor do: a
// refused token with what to do about it (not Discord's raw body), a
// network error naming the host asked, a wait that got no answer as such.
func connectError(server, apiBase string, waited time.Duration, err error) error {
	if discord.RefusedToken(err) {
		return fmt.Errorf("server %s: Discord refused the bot token: copy a fresh token (Developer Portal → your application → Bot → "+
			"Reset Token) and run `ccbridge setup`", server)
	}
	d := discord.Describe(err, apiBase, waited)
	if _, ok := d.(*discord.NoAnswerError); ok {
		return fmt.Errorf("server %s: %w", server, d)
	}
	return d // its text names the server already
}

// writeRoutes gives the hooks of hand-started sessions the project table.
func writeRoutes(ctx context.Context, store *state.Store, cfg *config.Config) error {
	var routes []state.Route
	platforms := map[string]string{}
	for _, s := range cfg.Servers {
		platforms[s.Name] = s.Platform
		for _, p := range s.Projects {
			dir, err := p.ProjectPath()
			if err != nil {
				continue
			}
			if real, err := filepath.EvalSymlinks(dir); err == nil {
				dir = real
			}
			routes = append(routes, state.Route{Path: dir, Server: s.Name, Project: p.Name, ChannelID: p.ChannelID, Progress: p.Progress})
		}
	}
	_, err := store.Routes.Update(ctx, state.RoutesKey, func(r *state.Routes) error { r.Routes, r.Platforms = routes, platforms; return nil })
	return err
}

// discordServers are the servers whose bots connect to Discord.
func discordServers(cfg *config.Config) []config.Server {
	var out []config.Server
	for _, s := range cfg.Servers {
		if !s.Telegram() {
			out = append(out, s)
		}
	}
	return out
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

// newSessions builds the session manager both front ends drive: Claude in
// the configured tmux server, with ccbridge's hook binaries.
func newSessions(cfg *config.Config, store *state.Store, registry *state.Registry, log *slog.Logger) (*session.Manager, error) {
	hookStop, hookPretool, err := session.HookBinaries()
	if err != nil {
		return nil, err
	}
	return session.New(session.Options{Config: cfg, Store: store, Registry: registry, Trees: worktree.New(execx.Exec{}),
		Panes: tmux.New(execx.Exec{}, tmux.Options{Socket: cfg.Tmux.Socket}), Log: log, HookStop: hookStop, HookPretool: hookPretool})
}
