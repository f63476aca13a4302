package daemon

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/panel"
	"github.com/ccbridge/ccbridge/internal/router"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/web"
)

// reloadDebounce lets an editor finish its write (a temp file renamed over
// the config, or a truncate then a write) before the file is read.
const reloadDebounce = 300 * time.Millisecond

// reloader re-reads the config file when it changes and on SIGHUP. An edit
// that does not check out changes nothing: the running config is kept and
// every problem is said, in the log and in each server's channel. A good
// edit is handed to the running parts (apply), and what changed is said,
// with what waits for a restart.
type reloader struct {
	path  string
	log   *slog.Logger
	cur   *config.Config // the config in use; only run touches it
	apply func(ctx context.Context, cfg *config.Config) error
	// post says a text in a channel of a server, as that server's bot.
	post func(ctx context.Context, server, channelID, text string) error
	// connected are the servers whose bots run: the ones posted to.
	connected map[string]bool
	// read is the file as last read; broken whether it did not check out.
	read   []byte
	broken bool

	hup     chan os.Signal
	watches []dirWatch      // none: not watched (SIGHUP still works)
	names   map[string]bool // the paths whose events count
}

// dirWatch is a watch of the directory of the config file or of its target.
type dirWatch struct {
	dir string
	w   *state.DirWatch
}

// catchHUP catches SIGHUP from now on. The run command calls it first
// thing: SIGHUP's default action ends the process, which systemd's
// Restart=on-failure takes for a clean stop, so a reload sent while the
// daemon starts would leave it down. A HUP caught early waits in the
// channel and reloads once the reloader runs. The caller stops it.
func catchHUP() chan os.Signal {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	return hup
}

// newReloader watches the file from now on (an edit made before run
// starts is not lost) and reloads on what hup (from catchHUP) receives;
// run reloads.
func newReloader(cfg *config.Config, hup chan os.Signal, log *slog.Logger, apply func(context.Context, *config.Config) error,
	post func(ctx context.Context, server, channelID, text string) error) *reloader {
	read, _ := os.ReadFile(cfg.Path) // only to tell a touch from an edit
	connected := map[string]bool{}
	for _, s := range cfg.Servers {
		connected[s.Name] = true
	}
	r := &reloader{path: cfg.Path, log: log, cur: cfg, apply: apply, post: post, connected: connected, read: read,
		hup: hup, names: map[string]bool{}}
	if err := r.watch(); err != nil {
		log.Warn("config changes are not watched; send SIGHUP to reload it", "config", r.path, "err", err)
	}
	return r
}

// run reloads on every change of the file and on SIGHUP until ctx ends.
func (r *reloader) run(ctx context.Context) {
	defer r.closeWatches()
	var changed [2]<-chan struct{} // the file's directory, its target's
	for i, w := range r.watches {
		changed[i] = w.w.Changed()
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.hup:
			r.log.Info("SIGHUP: reading the config again", "config", r.path)
			r.reload(ctx, true)
		case <-changed[0]:
			r.changed(r.watches[0], timer)
		case <-changed[1]:
			r.changed(r.watches[1], timer)
		case <-timer.C:
			r.reload(ctx, false)
		}
	}
}

// watch watches the directory of the config file (and of its target, when
// it is a symlink): an editor replaces the file by renaming another over
// it, which a watch of the file itself would lose. names gets the paths
// whose events count.
func (r *reloader) watch() error {
	paths := []string{r.path}
	if real, err := filepath.EvalSymlinks(r.path); err == nil && real != r.path {
		paths = append(paths, real)
	}
	for _, p := range paths {
		p, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		r.names[p] = true
		dir := filepath.Dir(p)
		if slices.ContainsFunc(r.watches, func(w dirWatch) bool { return w.dir == dir }) {
			continue
		}
		w, err := state.WatchDir(dir)
		if err != nil {
			r.closeWatches()
			return err
		}
		r.watches = append(r.watches, dirWatch{dir, w})
	}
	return nil
}

func (r *reloader) closeWatches() {
	for _, w := range r.watches {
		w.w.Close()
	}
	r.watches = nil
}

// changed looks (after the debounce) when the config file changed, or when
// events were lost (an overflow) and it may have.
func (r *reloader) changed(w dirWatch, timer *time.Timer) {
	names, lost := w.w.Take()
	if lost {
		r.log.Warn("watching the config: events were lost", "config", r.path)
		timer.Reset(reloadDebounce)
		return
	}
	for _, n := range names {
		if r.names[filepath.Join(w.dir, n)] {
			timer.Reset(reloadDebounce)
			return
		}
	}
}

// reload reads the file and applies it when it checks out. Without force,
// a file that reads as last time is left alone (a touch, a save without a
// change).
func (r *reloader) reload(ctx context.Context, force bool) {
	b, err := os.ReadFile(r.path)
	if err == nil && !force && bytes.Equal(b, r.read) {
		return
	}
	r.read = b
	cfg, problems, warnings := r.check(err)
	if len(problems) > 0 {
		r.broken = true
		r.log.Warn("the edited config has problems; the running config is kept", "config", r.path, "problems", strings.Join(problems, "; "))
		r.say(ctx, r.cur, fmt.Sprintf("⚠️ %s: the edited config `%s` was not applied; ccbridge keeps running with the config it had. Problems:\n- %s\nFix them and save again (`ccbridge config check` lists them too).",
			r.cur.General.Machine, r.path, strings.Join(problems, "\n- ")))
		return
	}
	changes := config.Diff(r.cur, cfg)
	if err := r.apply(ctx, cfg); err != nil {
		r.log.Error("the edited config could not be applied; the running config is kept", "config", r.path, "err", err)
		r.say(ctx, r.cur, fmt.Sprintf("⚠️ %s: the edited config could not be applied (%v); ccbridge keeps running with the config it had.", r.cur.General.Machine, err))
		r.read = nil // the next save tries again
		return
	}
	r.cur = cfg
	wasBroken := r.broken
	r.broken = false
	summary := config.ReloadSummary(changes)
	warned := ""
	if len(warnings) > 0 {
		// Said where the notice is read, not only in the log.
		warned = "\nWarnings:\n- " + strings.Join(warnings, "\n- ")
	}
	switch {
	case summary != "":
		r.log.Info("config reloaded", "config", r.path, "changes", strings.ReplaceAll(summary, "\n", " "))
		r.say(ctx, cfg, fmt.Sprintf("⚙️ %s: config reloaded.\n%s%s", cfg.General.Machine, summary, warned))
	case wasBroken:
		r.log.Info("the config is fixed; it is the one running", "config", r.path)
		r.say(ctx, cfg, fmt.Sprintf("✅ %s: the config is fixed; it is the same as the one running, so nothing changed.%s", cfg.General.Machine, warned))
	default:
		r.log.Info("config read again; nothing changed", "config", r.path)
	}
}

// check loads the file as `ccbridge config check` does, and returns it
// with every problem that keeps it from being used, and its warnings
// (logged here too).
func (r *reloader) check(readErr error) (cfg *config.Config, problems, warnings []string) {
	if readErr != nil {
		return nil, []string{"cannot read it: " + readErr.Error()}, nil
	}
	cfg, found, err := config.LoadAll(r.path)
	if err != nil {
		return nil, []string{strings.TrimPrefix(err.Error(), "config "+r.path+": ")}, nil
	}
	for _, p := range found {
		if p.Warning {
			r.log.Warn("config warning", "config", r.path, "warning", p.Error())
			warnings = append(warnings, p.Error())
			continue
		}
		problems = append(problems, p.Error())
	}
	return cfg, problems, warnings
}

// say posts text in each connected server's control-panel channel, else
// in its first project channel.
func (r *reloader) say(ctx context.Context, cfg *config.Config, text string) {
	for _, s := range cfg.Servers {
		if !r.connected[s.Name] {
			continue
		}
		ch := s.GeneralChannelID
		if ch == "" && len(s.Projects) > 0 {
			ch = s.Projects[0].ChannelID
		}
		if ch == "" {
			continue
		}
		if err := r.post(ctx, s.Name, ch, text); err != nil {
			r.log.Warn("could not say what the config reload did", "server", s.Name, "channel", ch, "err", err)
		}
	}
}

// liveParts are the parts of a running daemon a reloaded config reaches.
type liveParts struct {
	store     *state.Store
	ext       *state.Extras
	durable   string
	cur       *config.Config // the config applied last; only apply touches it
	sessions  *session.Manager
	router    *router.Router
	panel     *panel.Panel
	attention *attention
	web       *web.Links // nil: the web view is off
	log       *slog.Logger
}

// apply hands cfg to every part that reads the config: first the records
// the hooks read (policies first: what governs sessions; then the projects
// of hand-started sessions, attention settings and owners, the prompt
// timeout), then the parts in this process. A write that fails puts the
// previous config's records back, so the daemon keeps the config it had.
// Sessions already running are not touched.
func (p *liveParts) apply(ctx context.Context, cfg *config.Config) error {
	if err := p.writeRecords(ctx, cfg); err != nil {
		if p.cur == nil {
			return err
		}
		if rerr := p.writeRecords(ctx, p.cur); rerr != nil {
			p.log.Error("could not write the running config's records back", "err", rerr)
		}
		return err
	}
	p.cur = cfg
	setRedaction(cfg) // policy.go; only once every record says the same
	problem := ""
	if err := session.CheckCommand(cfg); err != nil {
		p.log.Warn("Claude cannot be started", "err", err)
		problem = "Claude cannot be started: " + err.Error()
	}
	p.sessions.Reconfigure(cfg)
	p.router.Reconfigure(cfg)
	p.panel.Reconfigure(cfg, problem)
	p.attention.live.Store(cfg)
	if p.web != nil {
		p.web.H.SetLinkTTL(cfg.Web.LinkTTL.Duration) // the view's other keys wait for a restart (config.Diff)
	}
	return nil
}

// writeRecords writes the records the hooks read from cfg.
func (p *liveParts) writeRecords(ctx context.Context, cfg *config.Config) error {
	if err := writePolicies(ctx, p.store, cfg, p.durable); err != nil {
		return err
	}
	if err := writeRoutes(ctx, p.store, cfg); err != nil {
		return err
	}
	if err := writePrefs(ctx, p.ext, cfg); err != nil {
		return err
	}
	for _, s := range cfg.Servers {
		if _, err := p.store.Bots.Get(s.Name); err != nil {
			continue // a server added: its bot connects at the next start
		}
		if _, err := p.store.Bots.Update(ctx, s.Name, func(b *state.Bot) error {
			b.PromptTimeout = cfg.Claude.PromptTimeout.Duration
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}
