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
	"slices"
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
	if existed {
		if w.hasBackup() {
			w.say("Editing %s (the backup %s.bak of an earlier version is kept as it is).", w.ConfigPath, filepath.Base(w.ConfigPath))
		} else {
			w.say("Editing %s (a backup is kept as %s.bak).", w.ConfigPath, filepath.Base(w.ConfigPath))
		}
	} else {
		w.say("Creating %s.", w.ConfigPath)
	}
	srv, err := w.pickServer(cfg)
	if err != nil {
		return err
	}

	// 1. The token and who the bot is.
	newToken, err := w.token(ctx, apiBase, srv)
	if err != nil {
		return err
	}
	// 2. The application: owner and the Message Content intent.
	app, err := w.application(ctx)
	if err != nil {
		return err
	}
	// 3. The invite, and the server the bot is in.
	w.say("\nInvite the bot to your server with exactly the permissions ccbridge needs (open in a browser):\n  %s", discord.InviteURL(app.ID))
	guild, err := w.guild(ctx, srv.GuildID)
	if err != nil {
		return err
	}
	if srv.GuildID != "" && srv.GuildID != guild.ID {
		// Another server's entry (or the example's placeholders, as
		// install.sh writes them): its owners and channels are not this one's.
		w.say("The config had this bot in server %s; its owners, panel channel and %d project(s) belong to that server.", srv.GuildID, len(srv.Projects))
		fresh, err := w.yes("Start this bot's entry afresh for "+strconv.Quote(guild.Name)+" (n keeps them)?", true)
		if err != nil {
			return err
		}
		if fresh {
			srv.OwnerIDs, srv.GeneralChannelID, srv.Projects = nil, "", nil
		}
	}
	srv.GuildID = guild.ID
	// 4. Channels → project directories.
	if err := w.projects(ctx, guild, srv); err != nil {
		return err
	}
	// 5. Owners.
	if err := w.owners(app, srv); err != nil {
		return err
	}
	// 6. Write the token file and the config.
	if newToken != "" {
		if err := w.writeToken(srv, newToken); err != nil {
			return err
		}
	}
	return w.write(cfg, existed)
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

// pickServer returns the [[servers]] entry to set up, adding one if needed.
func (w *wizard) pickServer(cfg *config.Config) (*config.Server, error) {
	switch len(cfg.Servers) {
	case 0:
		name, err := w.ask("A short name for this bot (letters, digits, - and _)", "home")
		if err != nil {
			return nil, err
		}
		cfg.Servers = append(cfg.Servers, config.Server{Name: safeName(name)})
		return &cfg.Servers[0], nil
	case 1:
		w.say("Setting up the bot %q.", cfg.Servers[0].Name)
		return &cfg.Servers[0], nil
	}
	w.say("This config has several bots:")
	for i, s := range cfg.Servers {
		w.say("  %d. %s", i+1, s.Name)
	}
	for {
		a, err := w.ask("Which one to set up (number)", "1")
		if err != nil {
			return nil, err
		}
		if n, err := strconv.Atoi(a); err == nil && n >= 1 && n <= len(cfg.Servers) {
			return &cfg.Servers[n-1], nil
		}
		w.say("Type a number between 1 and %d.", len(cfg.Servers))
	}
}

// token asks for the bot token (keeping a working one on Enter), checks it
// and sets w.client; newToken is set when one was typed.
func (w *wizard) token(ctx context.Context, apiBase string, srv *config.Server) (newToken string, err error) {
	current, curErr := srv.ResolveToken()
	prompt := "Bot token (Developer Portal → your application → Bot → Reset Token; input is hidden)"
	if curErr == nil {
		prompt = "Bot token (Enter keeps the current one; input is hidden)"
	}
	for attempt := 1; ; attempt++ {
		typed, err := w.secret(prompt)
		if err != nil {
			return "", err
		}
		token := discord.NormalizeToken(typed)
		if token == "" {
			if curErr != nil {
				w.say("A token is needed.")
				if attempt >= 3 {
					return "", errors.New("no bot token given")
				}
				continue
			}
			token = current
		}
		if w.client, err = discord.NewClient(apiBase, token); err != nil {
			return "", err
		}
		id, name, err := w.client.Me(ctx)
		if err == nil {
			w.say("The token works: the bot is %s (id %s).", name, id)
			if typed != "" {
				newToken = token
			}
			return newToken, nil
		}
		if !discord.IsAuth(err) {
			return "", fmt.Errorf("check the token: %w", err)
		}
		w.say("Discord refused this token (HTTP %d). Copy it again, or press Reset Token in the Developer Portal's Bot page.", discord.HTTPStatus(err))
		if typed == "" {
			curErr = err // the stored token is dead: ask for a new one
			prompt = "Bot token (input is hidden)"
		}
		if attempt >= 3 {
			return "", errors.New("Discord refused the bot token three times")
		}
	}
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

// projects lets the person map channels to directories.
func (w *wizard) projects(ctx context.Context, guild discord.Guild, srv *config.Server) error {
	chs, err := w.client.TextChannels(ctx, guild.ID)
	if err != nil {
		return err
	}
	for {
		w.say("\nText channels of %q:", guild.Name)
		for i, ch := range chs {
			mark := ""
			if p := projectOf(srv, ch.ID); p != nil {
				mark = fmt.Sprintf("  → project %s (%s)", p.Name, p.Path)
			} else if ch.ID == srv.GeneralChannelID {
				mark = "  → control panel"
			}
			w.say("  %d. #%s%s", i+1, ch.Name, mark)
		}
		for _, p := range srv.Projects {
			if !slices.ContainsFunc(chs, func(c discord.TextChannel) bool { return c.ID == p.ChannelID }) {
				w.say("  (project %s maps channel %s, which is not a text channel of this server: fix it in the config)", p.Name, p.ChannelID)
			}
		}
		a, err := w.ask("Channel to map to a project directory: its number, or a new name to create it (Enter when done)", "")
		if err != nil {
			return err
		}
		if a == "" {
			if len(srv.Projects) == 0 {
				w.say("No project mapped yet: the bot would answer nothing. Map at least one channel.")
				continue
			}
			return nil
		}
		var ch discord.TextChannel
		if n, err := strconv.Atoi(a); err == nil {
			if n < 1 || n > len(chs) {
				w.say("Type a number between 1 and %d.", len(chs))
				continue
			}
			ch = chs[n-1]
		} else {
			created, err := w.client.CreateTextChannel(ctx, guild.ID, discord.ChannelName(a))
			if discord.HTTPStatus(err) == 403 {
				w.say("The bot may not create channels (the invite leaves out Manage Channels on purpose).\n"+
					"Create #%s in Discord yourself, then press Enter here to list the channels again.", discord.ChannelName(a))
				if _, err := w.ask("Press Enter when it exists", ""); err != nil {
					return err
				}
				if chs, err = w.client.TextChannels(ctx, guild.ID); err != nil {
					return err
				}
				continue
			}
			if st := discord.HTTPStatus(err); st >= 400 && st < 500 {
				// A name Discord refuses (empty once cleaned, too long…):
				// failing here would lose every answer so far.
				w.say("Discord refused to create #%s: %v\nType another name, or the number of an existing channel.", discord.ChannelName(a), err)
				continue
			}
			if err != nil {
				return err
			}
			w.say("Created #%s.", created.Name)
			chs = append(chs, created)
			ch = created
		}
		if err := w.mapChannel(srv, ch); err != nil {
			return err
		}
	}
}

func projectOf(srv *config.Server, channelID string) *config.Project {
	for i := range srv.Projects {
		if srv.Projects[i].ChannelID == channelID {
			return &srv.Projects[i]
		}
	}
	return nil
}

func (w *wizard) mapChannel(srv *config.Server, ch discord.TextChannel) error {
	p := projectOf(srv, ch.ID)
	def := ""
	if p != nil {
		def = p.Path
	} else if home, err := os.UserHomeDir(); err == nil {
		def = "~/" + ch.Name
		if _, err := os.Stat(filepath.Join(home, ch.Name)); err != nil {
			def = ""
		}
	}
	var path string
	for {
		a, err := w.ask(fmt.Sprintf("Project directory for #%s (absolute, or starting with ~/)", ch.Name), def)
		if err != nil {
			return err
		}
		abs, err := config.ExpandHome(a)
		if err != nil || !filepath.IsAbs(abs) {
			w.say("%q is not an absolute path or ~/path.", a)
			continue
		}
		if fi, err := os.Stat(abs); err != nil {
			w.say("Note: %s does not exist yet; sessions there start once it does.", abs)
		} else if !fi.IsDir() {
			w.say("%s is not a directory.", abs)
			continue
		}
		path = a
		break
	}
	if p != nil {
		p.Path = path
		w.say("Project %s: #%s → %s.", p.Name, ch.Name, path)
		return nil
	}
	name := safeName(ch.Name)
	for i := 2; slices.ContainsFunc(srv.Projects, func(q config.Project) bool { return q.Name == name }); i++ {
		name = fmt.Sprintf("%s-%d", safeName(ch.Name), i)
	}
	srv.Projects = append(srv.Projects, config.Project{Name: name, ChannelID: ch.ID, Path: path})
	w.say("Project %s: #%s → %s.", name, ch.Name, path)
	return nil
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

func (w *wizard) writeToken(srv *config.Server, token string) error {
	path := srv.TokenFile
	if path == "" {
		path = tildePath(filepath.Join(filepath.Dir(w.ConfigPath), srv.Name+".token"))
	}
	abs, err := config.ExpandHome(path)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return fmt.Errorf("token file: %w", err)
	}
	if err := state.WriteAtomic(abs, []byte(token+"\n"), 0o600); err != nil {
		return fmt.Errorf("token file: %w", err)
	}
	if srv.TokenEnv != "" {
		w.say("The token now comes from %s; token_env %s is no longer used.", path, srv.TokenEnv)
	}
	srv.TokenFile, srv.TokenEnv, srv.Token = path, "", ""
	w.say("Saved the token in %s (mode 0600).", abs)
	return nil
}

// hasBackup reports whether <config>.bak exists.
func (w *wizard) hasBackup() bool {
	_, err := os.Lstat(w.ConfigPath + ".bak")
	return err == nil
}

func (w *wizard) write(cfg *config.Config, existed bool) error {
	out := config.Encode(cfg, "ccbridge configuration, written by `ccbridge setup`.\n"+
		"Every key is documented in config.example.toml; check with: ccbridge config check")
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
	return w.check()
}

// check is `ccbridge config check` on what was written.
func (w *wizard) check() error {
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
	w.say("config OK\n\nNext: `ccbridge doctor` checks everything, `ccbridge run` starts the bridge, `ccbridge service install` runs it as a service.")
	return nil
}

// tildePath writes a path under the home directory as ~/…, as the example
// config does.
func tildePath(p string) string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return p
	}
	if rel, err := filepath.Rel(home, p); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
		return "~/" + filepath.ToSlash(rel)
	}
	return p
}
