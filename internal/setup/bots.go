package setup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/discord"
	"github.com/ccbridge/ccbridge/internal/state"
)

// Which [[servers]] entry setup works on. An entry holds one bot in one
// server with its owners and projects: setup never repurposes one for
// another bot or another server unless the person says so (the default
// adds a new entry and leaves the others as they are).

// pickServer returns the index of the [[servers]] entry to set up, or -1
// for a new one (named once its token says which bot it is). Only the
// entries of the platform being set up (telegram) are offered.
func (w *wizard) pickServer(cfg *config.Config, telegram bool) (int, error) {
	var bots []int
	for i, s := range cfg.Servers {
		if s.Telegram() == telegram {
			bots = append(bots, i)
		}
	}
	switch len(bots) {
	case 0:
		return -1, nil
	case 1:
		w.say("Setting up the bot %q (a token of another bot adds a new entry).", cfg.Servers[bots[0]].Name)
		return bots[0], nil
	}
	w.say("This config has several bots:")
	for n, i := range bots {
		w.say("  %d. %s", n+1, cfg.Servers[i].Name)
	}
	for {
		a, err := w.ask("Which one to set up (number, or new for another bot)", "1")
		if err != nil {
			return 0, err
		}
		if strings.EqualFold(a, "new") {
			return -1, nil
		}
		if n, err := strconv.Atoi(a); err == nil && n >= 1 && n <= len(bots) {
			return bots[n-1], nil
		}
		w.say("Type a number between 1 and %d, or new.", len(bots))
	}
}

// addServer asks for the name of a new entry (one no other entry has) and
// appends it, with from's token source; it returns its index.
func (w *wizard) addServer(cfg *config.Config, suggest string, from config.Server) (int, error) {
	taken := func(n string) bool {
		return slices.ContainsFunc(cfg.Servers, func(s config.Server) bool { return s.Name == n })
	}
	if suggest != "" {
		suggest = safeName(suggest)
		for i := 2; taken(suggest); i++ {
			suggest = fmt.Sprintf("%s-%d", safeName(suggest), i)
		}
	}
	for {
		a, err := w.ask("A short name for this bot (letters, digits, - and _)", suggest)
		if err != nil {
			return 0, err
		}
		if a == "" {
			w.say("A name is needed.")
			continue
		}
		name := safeName(a)
		if taken(name) {
			w.say("The config already has a bot named %q; type another name.", name)
			continue
		}
		cfg.Servers = append(cfg.Servers, config.Server{Name: name, TokenEnv: from.TokenEnv, TokenFile: from.TokenFile, Token: from.Token})
		return len(cfg.Servers) - 1, nil
	}
}

// botToken is the outcome of the token step.
type botToken struct {
	typed          string // the token typed; "" when the entry's was kept
	changed        bool   // the token typed is not the one the entry had
	botID, botName string
	// prevID is the bot the entry's own token belongs to, when a new one
	// was typed and the old one still works; "" when unknown.
	prevID string
}

// token asks for the bot token (keeping a working one on Enter), checks it
// and sets w.client.
func (w *wizard) token(ctx context.Context, apiBase string, srv *config.Server) (botToken, error) {
	current, curErr := srv.ResolveToken()
	prompt := "Bot token (Developer Portal → your application → Bot → Reset Token" + w.hidden() + ")"
	if curErr == nil {
		prompt = "Bot token (Enter keeps the current one" + w.hidden() + ")"
	}
	for attempt := 1; ; attempt++ {
		typed, err := w.secret(prompt)
		if err != nil {
			return botToken{}, err
		}
		token := discord.NormalizeToken(typed)
		if token == "" {
			if curErr != nil {
				w.say("A token is needed.")
				if attempt >= 3 {
					return botToken{}, errors.New("no bot token given")
				}
				continue
			}
			token = current
		}
		if w.client, err = discord.NewClient(apiBase, token); err != nil {
			return botToken{}, err
		}
		w.say("Checking the token with Discord (%s)…", apiBase)
		id, name, err := w.client.Me(ctx)
		if err == nil {
			w.say("The token works: the bot is %s (id %s).", name, id)
			t := botToken{botID: id, botName: name}
			if typed != "" {
				t.typed = token
				t.changed = token != current
				if token != current {
					t.prevID = w.botOf(ctx, apiBase, current, curErr)
				}
			}
			return t, nil
		}
		if !discord.IsAuth(err) {
			return botToken{}, fmt.Errorf("check the token: %w", err)
		}
		w.say("Discord refused this token (HTTP %d). Copy it again, or press Reset Token in the Developer Portal's Bot page.", discord.HTTPStatus(err))
		if typed == "" {
			curErr = err // the stored token is dead: ask for a new one
			prompt = "Bot token" + w.hidden()
		}
		if attempt >= 3 {
			return botToken{}, errors.New("Discord refused the bot token three times")
		}
	}
}

// hidden says whether the token is read without echo.
func (w *wizard) hidden() string {
	if w.ReadSecret != nil {
		return "; input is hidden"
	}
	return ""
}

// botOf returns the id of the bot a token belongs to, or "" when it is
// unset or Discord does not accept it.
func (w *wizard) botOf(ctx context.Context, apiBase, token string, resolveErr error) string {
	if resolveErr != nil || token == "" {
		return ""
	}
	c, err := discord.NewClient(apiBase, token)
	if err != nil {
		return ""
	}
	id, _, err := c.Me(ctx)
	if err != nil {
		return ""
	}
	return id
}

// entryFor returns the entry the token's bot is set up in (i is the one
// picked, -1 for a new one): the picked entry when it is that bot's (or its
// bot is unknown), else the entry the config already has for that bot (two
// entries of one bot would be two gateway sessions of it), else a new one.
func (w *wizard) entryFor(ctx context.Context, apiBase string, cfg *config.Config, i int, tok botToken) (int, error) {
	if i >= 0 && (tok.typed == "" || tok.prevID == tok.botID) {
		return i, nil
	}
	for j, s := range cfg.Servers {
		if j == i || s.Telegram() { // a Telegram token is not Discord's to check
			continue
		}
		token, err := s.ResolveToken()
		if err != nil {
			continue
		}
		if token == tok.typed || w.botOf(ctx, apiBase, token, nil) == tok.botID {
			w.say("This token is for the bot %s (id %s); the config has it as %q: editing that entry.", tok.botName, tok.botID, s.Name)
			return j, nil
		}
	}
	switch {
	case i >= 0 && tok.prevID == "":
		return i, nil // the entry's own token is unset or dead: this one replaces it
	case i >= 0:
		w.say("This token is for the bot %s (id %s), not for the bot of %q (id %s): adding it as a new bot; %q stays as it is.",
			tok.botName, tok.botID, cfg.Servers[i].Name, tok.prevID, cfg.Servers[i].Name)
		return w.addServer(cfg, tok.botName, config.Server{})
	case len(cfg.Servers) == 0:
		return w.addServer(cfg, "home", config.Server{})
	}
	return w.addServer(cfg, tok.botName, config.Server{})
}

// otherServer asks what to do when the bot is in another server than the
// entry's: by default a new entry for this server, leaving the entry's
// owners, panel and projects alone; forgetting them takes a "y".
func (w *wizard) otherServer(cfg *config.Config, i int, tok botToken, guild discord.Guild) (int, error) {
	s := cfg.Servers[i]
	if s.GuildID == "" || s.GuildID == guild.ID {
		return i, nil
	}
	w.say("The entry %q is for server %s; its owners, panel channel and %d project(s) belong to that server.", s.Name, s.GuildID, len(s.Projects))
	forget, err := w.yes(fmt.Sprintf("Forget them and use %q for %s instead (n adds a new entry and keeps %q)?", s.Name, strconv.Quote(guild.Name), s.Name), false)
	if err != nil {
		return i, err
	}
	if forget {
		srv := &cfg.Servers[i]
		srv.OwnerIDs, srv.GeneralChannelID, srv.Projects = nil, "", nil
		return i, nil
	}
	from := s
	if tok.typed != "" {
		from = config.Server{} // the new token gets a file of its own
	}
	return w.addServer(cfg, guild.Name, from)
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
	if repo := config.GitWorkTree(filepath.Dir(abs)); repo != "" {
		// A config dir linked into a dotfiles repository: the token would
		// be one `git add` away from being published.
		durable, err := state.DurableDir()
		if err != nil {
			return err
		}
		abs = filepath.Join(durable, srv.Name+".token")
		path = tildePath(abs)
		w.say("%s is inside the git work tree %s: the token goes to %s instead, outside it.", filepath.Dir(path), repo, path)
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
