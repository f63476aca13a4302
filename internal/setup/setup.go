// Package setup is `ccbridge setup`: a terminal walk-through that checks the
// bot token, the Message Content intent and the bot's server, maps channels
// to project directories, and writes the config and the token file (0600).
// It is the one command that writes the user's config, and it keeps every
// key the file already held (see config.Encode).
package setup

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/discord"
	"github.com/ccbridge/ccbridge/internal/state"
)

// Options configure one run.
type Options struct {
	ConfigPath string // resolved config path
	In         io.Reader
	Out        io.Writer
	// ReadSecret reads the token without echo; nil reads a line from In.
	// It must return when ctx ends (and put the terminal back as it was).
	ReadSecret func(ctx context.Context) (string, error)
	// PollEvery is how often the guild list is read while waiting for the
	// bot to join a server; Wait bounds that wait.
	PollEvery, Wait time.Duration
	// DaemonRunning reports whether a ccbridge daemon runs now (nil: not
	// known); the last words differ.
	DaemonRunning func() bool
	// Telegram sets up a Telegram bot instead of a Discord one (see
	// telegram.go).
	Telegram bool
}

// Defaults for Options.
const (
	DefaultPollEvery = 2 * time.Second
	DefaultWait      = 10 * time.Minute
)

// ErrInputEnded is returned when stdin ends before setup is complete.
var ErrInputEnded = errors.New("input ended before setup was complete; nothing was written")

type wizard struct {
	Options
	// ctx is the run's: Ctrl-C ends a prompt as it ends a wait.
	ctx    context.Context
	in     *bufio.Reader
	client *discord.Client
}

// Run walks through setup and writes the config; it returns an error a
// person can act on.
func Run(ctx context.Context, o Options) error {
	if o.PollEvery <= 0 {
		o.PollEvery = DefaultPollEvery
	}
	if o.Wait <= 0 {
		o.Wait = DefaultWait
	}
	w := &wizard{Options: o, ctx: ctx, in: bufio.NewReader(o.In)}
	if o.Telegram {
		return w.runTelegram(ctx)
	}
	return w.run(ctx)
}

func (w *wizard) say(format string, args ...any) { fmt.Fprintf(w.Out, format+"\n", args...) }

// ask prints a prompt and returns the line typed, trimmed; def when empty.
func (w *wizard) ask(prompt, def string) (string, error) {
	if def != "" {
		fmt.Fprintf(w.Out, "%s [%s]: ", prompt, def)
	} else {
		fmt.Fprintf(w.Out, "%s: ", prompt)
	}
	line, err := w.readLine()
	if err != nil && (err != io.EOF || line == "") {
		fmt.Fprintln(w.Out)
		if err == io.EOF {
			return "", ErrInputEnded
		}
		return "", err
	}
	line = strings.TrimSpace(line)
	if line == "" {
		return def, nil
	}
	return line, nil
}

// readLine reads a line, or returns when the run's context ends (the
// reader is then abandoned: the run is over).
func (w *wizard) readLine() (string, error) {
	type result struct {
		line string
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		line, err := w.in.ReadString('\n')
		ch <- result{line, err}
	}()
	select {
	case r := <-ch:
		return r.line, r.err
	case <-w.ctx.Done():
		return "", w.ctx.Err()
	}
}

func (w *wizard) yes(prompt string, def bool) (bool, error) {
	d := "y/N"
	if def {
		d = "Y/n"
	}
	a, err := w.ask(prompt+" ("+d+")", "")
	if err != nil {
		return false, err
	}
	if a == "" {
		return def, nil
	}
	return strings.HasPrefix(strings.ToLower(a), "y"), nil
}

func (w *wizard) secret(prompt string) (string, error) {
	if w.ReadSecret == nil {
		return w.ask(prompt, "")
	}
	fmt.Fprintf(w.Out, "%s: ", prompt)
	s, err := w.ReadSecret(w.ctx)
	fmt.Fprintln(w.Out)
	if err != nil {
		return "", fmt.Errorf("read token: %w", err)
	}
	return strings.TrimSpace(s), nil
}

// load reads the existing config strictly; a file setup cannot read fully
// is left alone.
func (w *wizard) load() (*config.Config, bool, error) {
	b, err := os.ReadFile(w.ConfigPath)
	if errors.Is(err, fs.ErrNotExist) {
		return &config.Config{}, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read config: %w", err)
	}
	c, err := config.Decode(string(b))
	if err != nil {
		return nil, false, fmt.Errorf("config %s: %w; fix it (ccbridge config check) or move it away, setup does not rewrite a file it cannot read whole", w.ConfigPath, err)
	}
	return c, true, nil
}

func (w *wizard) run(ctx context.Context) error {
	cfg, existed, err := w.load()
	if err != nil {
		return err
	}
	apiBase := strings.TrimRight(cfg.Discord.APIBase, "/")
	if apiBase == "" {
		apiBase = config.DefaultAPIBase
	}
	w.announce(existed)
	i, err := w.pickServer(cfg, false) // -1: a new entry
	if err != nil {
		return err
	}

	// 1. The token and who the bot is; then the entry of that bot (a new
	// one is named now that the bot is known).
	entry := &config.Server{}
	if i >= 0 {
		entry = &cfg.Servers[i]
	}
	tok, err := w.token(ctx, apiBase, entry)
	if err != nil {
		return err
	}
	if i, err = w.entryFor(ctx, apiBase, cfg, i, tok); err != nil {
		return err
	}
	// 2. The application: owner and the Message Content intent.
	app, err := w.application(ctx)
	if err != nil {
		return err
	}
	// 3. The invite, and the server the bot is in.
	w.say("\nInvite the bot to your server with exactly the permissions ccbridge needs (open in a browser):\n  %s", discord.InviteURL(app.ID))
	guild, err := w.guild(ctx, cfg.Servers[i].GuildID)
	if err != nil {
		return err
	}
	if i, err = w.otherServer(cfg, i, tok, guild); err != nil {
		return err
	}
	srv := &cfg.Servers[i]
	srv.GuildID = guild.ID
	// 4. Owners: before the channels, which are created for them alone.
	if err := w.owners(app, srv); err != nil {
		return err
	}
	// 5. Channels → project directories, and the control panel's.
	chs, err := w.projects(ctx, guild, srv, tok.botID)
	if err != nil {
		return err
	}
	if srv.GeneralChannelID == "" {
		if err := w.panel(ctx, guild, srv, tok.botID, chs); err != nil {
			return err
		}
	}
	// 6. Write the token file and the config.
	if tok.typed != "" {
		if err := w.writeToken(srv, tok.typed); err != nil {
			return err
		}
	}
	return w.write(cfg, existed, tok.changed)
}

// announce says which file is created or edited, and its backup.
func (w *wizard) announce(existed bool) {
	switch {
	case !existed:
		w.say("Creating %s.", w.ConfigPath)
	case w.hasBackup():
		w.say("Editing %s (the backup %s.bak of an earlier version is kept as it is).", w.ConfigPath, filepath.Base(w.ConfigPath))
	default:
		w.say("Editing %s (a backup is kept as %s.bak).", w.ConfigPath, filepath.Base(w.ConfigPath))
	}
}

var nameSafe = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// safeName turns a channel name into a config name.
func safeName(s string) string {
	s = strings.Trim(nameSafe.ReplaceAllString(s, "-"), "-_")
	if len(s) > 64 {
		s = s[:64]
	}
	if s == "" {
		s = "project"
	}
	return s
}

// application reads the owner and makes sure the Message Content intent is
// on, waiting for the person to enable it.
func (w *wizard) application(ctx context.Context) (discord.App, error) {
	for {
		app, err := w.client.Application(ctx)
		if err != nil {
			return app, err
		}
		if app.MessageContent() {
			w.say("Message Content Intent: enabled.")
			return app, nil
		}
		w.say("\nThe Message Content Intent is OFF: without it Discord refuses ccbridge's connection (close code 4014).\n"+
			"Enable it: https://discord.com/developers/applications/%s/bot → Privileged Gateway Intents →\n"+
			"Message Content Intent → on → Save Changes.", app.ID)
		a, err := w.ask("Press Enter when it is enabled (or type skip to go on without it)", "")
		if err != nil {
			return app, err
		}
		if strings.EqualFold(a, "skip") {
			w.say("Going on without it; `ccbridge run` will fail until it is enabled.")
			return app, nil
		}
	}
}

// guild waits until the bot is in a server and picks one.
func (w *wizard) guild(ctx context.Context, current string) (discord.Guild, error) {
	gs, err := w.client.Guilds(ctx)
	if err != nil {
		return discord.Guild{}, err
	}
	if len(gs) == 0 {
		w.say("Waiting for the bot to join a server: open the URL above, pick the server and press Authorize (up to %s; Ctrl-C stops)…", w.Wait)
		deadline := time.NewTimer(w.Wait)
		defer deadline.Stop()
		tick := time.NewTicker(w.PollEvery)
		defer tick.Stop()
		for len(gs) == 0 {
			select {
			case <-ctx.Done():
				return discord.Guild{}, ctx.Err()
			case <-deadline.C:
				return discord.Guild{}, fmt.Errorf("the bot has not joined a server within %s: open the invite URL above, choose your server, press Authorize, then run `ccbridge setup` again", w.Wait)
			case <-tick.C:
			}
			if gs, err = w.client.Guilds(ctx); err != nil {
				return discord.Guild{}, err
			}
		}
	}
	if len(gs) == 1 {
		w.say("The bot is in the server %q.", gs[0].Name)
		return gs[0], nil
	}
	def := "1"
	w.say("The bot is in several servers:")
	for i, g := range gs {
		w.say("  %d. %s", i+1, g.Name)
		if g.ID == current {
			def = strconv.Itoa(i + 1)
		}
	}
	for {
		a, err := w.ask("Which server is this bot for (number)", def)
		if err != nil {
			return discord.Guild{}, err
		}
		if n, err := strconv.Atoi(a); err == nil && n >= 1 && n <= len(gs) {
			return gs[n-1], nil
		}
		w.say("Type a number between 1 and %d.", len(gs))
	}
}

var snowflake = regexp.MustCompile(`^[0-9]{15,21}$`)

// owners sets owner_ids: kept when set, else the application's owner,
// confirmed or typed.
func (w *wizard) owners(app discord.App, srv *config.Server) error {
	def := strings.Join(srv.OwnerIDs, ",")
	prompt := "Discord user ids allowed to drive sessions (comma separated)"
	if def == "" && app.OwnerID != "" {
		def = app.OwnerID
		prompt = "Your Discord user id (the application's owner is " + app.OwnerID + "; only owners can drive sessions)"
	}
	for {
		a, err := w.ask(prompt, def)
		if err != nil {
			return err
		}
		var ids []string
		ok := a != ""
		for _, f := range strings.FieldsFunc(a, func(r rune) bool { return r == ',' || r == ' ' }) {
			if !snowflake.MatchString(f) {
				ok = false
			}
			ids = append(ids, f)
		}
		if ok {
			srv.OwnerIDs = ids
			return nil
		}
		w.say("Type Discord user ids (15 to 21 digits; Developer Mode → right-click your name → Copy User ID).")
	}
}

// hasBackup reports whether <config>.bak exists.
func (w *wizard) hasBackup() bool {
	_, err := os.Lstat(w.ConfigPath + ".bak")
	return err == nil
}

func (w *wizard) write(cfg *config.Config, existed, newToken bool) error {
	out := config.Encode(cfg, config.SetupHeader+"\n"+
		"Every key, with its default: config.example.toml (install.sh puts it next to this file); check with: ccbridge config check")
	if err := os.MkdirAll(filepath.Dir(w.ConfigPath), 0o700); err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	// The first backup is kept: it holds the hand-written original, with
	// its comments, which a later run's backup (of setup's own output)
	// would replace.
	if existed && !w.hasBackup() {
		old, err := os.ReadFile(w.ConfigPath)
		if err != nil {
			return fmt.Errorf("back up config: %w", err)
		}
		if err := state.WriteAtomic(w.ConfigPath+".bak", old, 0o600); err != nil {
			return fmt.Errorf("back up config: %w", err)
		}
	}
	// A new 0600 file renamed over the old: an old 0644 file's mode goes too.
	if err := state.WriteAtomic(w.ConfigPath, out, 0o600); err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	w.say("\nWrote %s (mode 0600).", w.ConfigPath)
	return w.check(newToken)
}

// check is `ccbridge config check` on what was written; newToken: a bot
// token was typed that the entry did not have.
func (w *wizard) check(newToken bool) error {
	c, err := config.Load(w.ConfigPath)
	if err != nil {
		return err
	}
	bad := false
	for _, p := range c.Check() {
		if p.Warning {
			w.say("warning: %s", p)
		} else {
			w.say("error: %s", p)
			bad = true
		}
	}
	if bad {
		return fmt.Errorf("%s has problems (listed above); fix them and run `ccbridge config check`", w.ConfigPath)
	}
	c.WriteSummary(w.Out)
	w.say("config OK\n\n%s", epilogue(w.DaemonRunning != nil && w.DaemonRunning(), newToken))
	return nil
}

// epilogue says what comes next: with a daemon running, that it applies
// the edit by itself, but not a new token (the config text may not even
// change: the token is in its token_file).
func epilogue(running, newToken bool) string {
	if running {
		s := "ccbridge is running: it reads this file again by itself and applies the change without a restart. " +
			"The project channel (or control panel) says what changed, and names any setting that needs a restart " +
			"(a bot token, a new server). "
		if newToken {
			s += "You entered a new bot token: restart ccbridge for the new token (`systemctl --user restart ccbridge` for the service). "
		}
		return s + "Next: `ccbridge doctor` checks everything."
	}
	return "Next: `ccbridge doctor` checks everything, `ccbridge run` starts the bridge, `ccbridge service install` runs it as a service. " +
		"Once it runs, it applies later edits of the config by itself."
}

// tildePath writes a path under the home directory as ~/…, as the example
// config does.
func tildePath(p string) string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return p
	}
	rel, err := filepath.Rel(home, p)
	switch {
	case err != nil || rel == ".." || strings.HasPrefix(rel, "../"):
		return p
	case rel == ".":
		return "~"
	}
	return "~/" + filepath.ToSlash(rel)
}
