package setup

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/telegram"
)

// `ccbridge setup --telegram`: a Telegram bot in a forum supergroup. The
// Bot API lists neither the groups a bot is in nor a group's topics, so
// the group (and its owner) are found from a message the person sends
// there, and each project gets a topic setup creates.

// tgBot is the outcome of the Telegram token step.
type tgBot struct {
	client  *telegram.Client
	me      telegram.Identity
	typed   string // the token typed; "" when the entry's was kept
	changed bool
	prevID  int64 // the bot of the entry's own token, when another was typed
}

func (w *wizard) runTelegram(ctx context.Context) error {
	cfg, existed, err := w.load()
	if err != nil {
		return err
	}
	apiBase := strings.TrimRight(cfg.Telegram.APIBase, "/")
	if apiBase == "" {
		apiBase = config.DefaultTelegramAPIBase
	}
	w.announce(existed)
	i, err := w.pickServer(cfg, true)
	if err != nil {
		return err
	}
	entry := &config.Server{}
	if i >= 0 {
		entry = &cfg.Servers[i]
	}
	bot, err := w.tgToken(ctx, apiBase, entry)
	if err != nil {
		return err
	}
	if i >= 0 && bot.prevID != 0 && bot.prevID != bot.me.ID {
		w.say("This token is for %s, not for the bot of %q: adding it as a new bot; %q stays as it is.", bot.me.Label(), entry.Name, entry.Name)
		i = -1
	}
	if i < 0 {
		suggest := bot.me.Username
		if len(cfg.Servers) == 0 {
			suggest = "phone"
		}
		if i, err = w.addServer(cfg, suggest, config.Server{}); err != nil {
			return err
		}
		cfg.Servers[i].Platform = config.PlatformTelegram
	}
	group, owner, err := w.tgGroup(ctx, bot)
	if err != nil {
		return err
	}
	srv := &cfg.Servers[i]
	chatID := strconv.FormatInt(group.ID, 10)
	if srv.ChatID != "" && srv.ChatID != chatID && len(srv.Projects) > 0 {
		// Topic ids are a group's own: those of the old group mean nothing
		// in the new one.
		w.say("The entry %q was for the group %s; its %d project(s) had topics there and are set up again here.", srv.Name, srv.ChatID, len(srv.Projects))
		srv.Projects = nil
	}
	srv.ChatID = chatID
	if id := strconv.FormatInt(owner.ID, 10); !slices.Contains(srv.OwnerIDs, id) {
		srv.OwnerIDs = append(srv.OwnerIDs, id)
	}
	if err := w.tgProjects(ctx, bot.client, group, srv); err != nil {
		return err
	}
	if bot.typed != "" {
		if err := w.writeToken(srv, bot.typed); err != nil {
			return err
		}
	}
	return w.write(cfg, existed, bot.changed)
}

// tgToken asks for the token (Enter keeps a working one), checks it with
// getMe and sets up the client.
func (w *wizard) tgToken(ctx context.Context, apiBase string, srv *config.Server) (tgBot, error) {
	current, curErr := srv.ResolveToken()
	prompt := "Bot token (from @BotFather: /newbot makes a bot, /token shows an existing bot's" + w.hidden() + ")"
	if curErr == nil {
		prompt = "Bot token (Enter keeps the current one" + w.hidden() + ")"
	}
	for attempt := 1; ; attempt++ {
		typed, err := w.secret(prompt)
		if err != nil {
			return tgBot{}, err
		}
		token := strings.TrimSpace(typed)
		if token == "" {
			if curErr != nil {
				w.say("A token is needed.")
				if attempt >= 3 {
					return tgBot{}, errors.New("no bot token given")
				}
				continue
			}
			token = current
		}
		c, err := telegram.NewClient(apiBase, token)
		if err != nil {
			return tgBot{}, err
		}
		w.say("Checking the token with Telegram (%s)…", apiBase)
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		me, err := c.Me(cctx)
		cancel()
		if err == nil {
			w.say("The token works: the bot is %s (id %d).", me.Label(), me.ID)
			b := tgBot{client: c, me: me}
			if typed != "" && token != current {
				b.typed, b.changed = token, true
				b.prevID = tgBotOf(ctx, apiBase, current, curErr)
			}
			return b, nil
		}
		if !telegram.IsRefusedToken(err) {
			return tgBot{}, fmt.Errorf("check the token: %w", err)
		}
		w.say("Telegram refused this token (%s). Copy it again from @BotFather: send it /token and pick the bot (or /revoke for a new one).", telegram.Refusal(err))
		if typed == "" {
			curErr = err
			prompt = "Bot token" + w.hidden()
		}
		if attempt >= 3 {
			return tgBot{}, errors.New("Telegram refused the bot token three times")
		}
	}
}

// tgBotOf is the id of the bot a token belongs to; 0 when unknown.
func tgBotOf(ctx context.Context, apiBase, token string, resolveErr error) int64 {
	if resolveErr != nil || token == "" {
		return 0
	}
	c, err := telegram.NewClient(apiBase, token)
	if err != nil {
		return 0
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	me, err := c.Me(cctx)
	if err != nil {
		return 0
	}
	return me.ID
}

// errPolled is a 409: something else reads the bot's updates.
var errPolled = errors.New("another program is reading this bot's updates (Telegram answered 409 Conflict): " +
	"stop ccbridge while setup runs (`systemctl --user stop ccbridge`, or end the `ccbridge run` you started; " +
	"a webhook set for the bot conflicts too), then run `ccbridge setup --telegram` again")

// tgGroup waits for a person's message in a forum supergroup, confirms
// the group and its sender as the owner, and makes sure the bot may
// manage the group's topics.
func (w *wizard) tgGroup(ctx context.Context, bot tgBot) (telegram.ChatInfo, telegram.Identity, error) {
	w.say("\nNow in Telegram:\n"+
		"  1. Use a group with Topics on (group → Edit → Topics), or create one.\n"+
		"  2. Add %s to it as an administrator with the right Manage topics (group → Edit → Administrators → Add Admin).\n"+
		"  3. Send any message in the group (/start@%s is seen even before the bot is an administrator).",
		bot.me.Label(), bot.me.Username)
	for {
		s, err := w.tgSighting(ctx, bot.client)
		if err != nil {
			return telegram.ChatInfo{}, telegram.Identity{}, err
		}
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		group, err := bot.client.Chat(cctx, s.Chat.ID)
		cancel()
		if err != nil {
			return group, s.From, fmt.Errorf("read the group: %w", err)
		}
		ok, err := w.yes(fmt.Sprintf("Found the group %q (id %d), and you: %s (id %d). Use this group, with you as the owner?",
			group.Title, group.ID, s.From.Label(), s.From.ID), true)
		if err != nil {
			return group, s.From, err
		}
		if !ok {
			w.say("Send a message in the group ccbridge should use, as the person who will drive it.")
			continue
		}
		if err := w.tgAdmin(ctx, bot, group); err != nil {
			return group, s.From, err
		}
		return group, s.From, nil
	}
}

// tgSighting polls getUpdates until a person writes in a forum, saying
// what is wrong with any other place written in. Only the updates it read
// are confirmed: each poll confirms the ones before it, and the last batch
// is confirmed before returning, so the daemon starts with what came
// after.
func (w *wizard) tgSighting(ctx context.Context, c *telegram.Client) (telegram.Sighting, error) {
	w.say("Waiting for your message in the group (up to %s; Ctrl-C stops)…", w.Wait)
	deadline := time.Now().Add(w.Wait)
	var offset int64
	said := map[int64]bool{} // chats whose problem was said; 0: Telegram not answering
	for {
		wait := max(min(w.PollEvery, time.Until(deadline)), 0)
		pctx, cancel := context.WithTimeout(ctx, wait+30*time.Second)
		seen, next, err := c.Sightings(pctx, offset, wait)
		cancel()
		switch {
		case ctx.Err() != nil:
			return telegram.Sighting{}, ctx.Err()
		case telegram.IsConflict(err):
			return telegram.Sighting{}, errPolled
		case errors.Is(err, chat.ErrTransient) && time.Now().Before(deadline):
			// A 429, a 5xx or the network: the wait goes on.
			if !said[0] {
				said[0] = true
				w.say("Telegram did not answer (%v); trying again…", err)
			}
			wait = max(wait, time.Second, chat.RetryAfter(err))
		case err != nil:
			return telegram.Sighting{}, fmt.Errorf("read the bot's updates: %w", err)
		}
		offset = next
		for _, s := range seen {
			if s.Chat.Forum() {
				cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
				err := c.Confirm(cctx, offset)
				cancel()
				if telegram.IsConflict(err) {
					return s, errPolled
				}
				if err != nil {
					return s, fmt.Errorf("confirm the updates read: %w", err)
				}
				return s, nil
			}
			if !said[s.Chat.ID] {
				said[s.Chat.ID] = true
				w.say("%s", notAForum(s.Chat))
			}
		}
		if time.Now().After(deadline) {
			return telegram.Sighting{}, fmt.Errorf("no message in a group with topics within %s: add the bot to the group, send a message there, and run `ccbridge setup --telegram` again", w.Wait)
		}
		if wait < time.Second || err != nil { // Telegram did not wait
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return telegram.Sighting{}, ctx.Err()
			case <-t.C:
			}
		}
	}
}

// notAForum says why a chat written in cannot be the bot's group.
func notAForum(ch telegram.ChatInfo) string {
	switch ch.Type {
	case "private":
		return "That message came to the bot directly: send it in the group instead."
	case "group":
		return fmt.Sprintf("The group %d has no topics: turn them on (group → Edit → Topics; it becomes a supergroup with a new id), then send a message there again.", ch.ID)
	case "supergroup":
		return fmt.Sprintf("The group %d has Topics off: turn them on (group → Edit → Topics), then send a message there again.", ch.ID)
	}
	return fmt.Sprintf("The chat %d is a %s, not a group with topics: use a group and send a message there.", ch.ID, ch.Type)
}

// tgAdmin waits until the bot is an administrator of the group with the
// right Manage topics, saying what is missing.
func (w *wizard) tgAdmin(ctx context.Context, bot tgBot, group telegram.ChatInfo) error {
	for {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		m, err := bot.client.ChatMember(cctx, group.ID, bot.me.ID)
		cancel()
		if err != nil {
			return fmt.Errorf("read the bot's rights in the group: %w", err)
		}
		if m.ManagesTopics() {
			w.say("%s is an administrator of %q and may manage its topics.", bot.me.Label(), group.Title)
			return nil
		}
		if m.Status == "administrator" {
			w.say("%s is an administrator of %q but lacks the right Manage topics: group → Edit → Administrators → %s → Manage topics on → Save.", bot.me.Label(), group.Title, bot.me.Label())
		} else {
			w.say("%s is not an administrator of %q: group → Edit → Administrators → Add Admin → %s, with Manage topics on → Save.", bot.me.Label(), group.Title, bot.me.Label())
		}
		if _, err := w.ask("Press Enter when it is done", ""); err != nil {
			return err
		}
	}
}

// tgProjects maps directories to projects, each with a forum topic setup
// creates (the Bot API cannot list a group's topics to pick from).
func (w *wizard) tgProjects(ctx context.Context, c *telegram.Client, group telegram.ChatInfo, srv *config.Server) error {
	for _, p := range srv.Projects {
		w.say("Project %s: topic %s → %s.", p.Name, p.TopicID, p.Path)
	}
	for {
		a, err := w.ask("Project directory to give a topic (absolute, or starting with ~/; Enter when done)", "")
		if err != nil {
			return err
		}
		if a == "" {
			if len(srv.Projects) == 0 {
				w.say("No project yet: the bot would answer nothing. Add at least one directory.")
				continue
			}
			return nil
		}
		path, abs, ok := w.projectDir(a)
		if !ok {
			continue
		}
		name, err := w.projectName(srv, filepath.Base(abs))
		if err != nil {
			return err
		}
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		topic, err := c.CreateTopic(cctx, group.ID, name)
		cancel()
		if err != nil {
			return fmt.Errorf("create the topic %q: %w", name, err)
		}
		srv.Projects = append(srv.Projects, config.Project{Name: name, TopicID: strconv.FormatInt(topic, 10), Path: path})
		w.say("Created the topic %q in %q (topic_id %d): project %s → %s.", name, group.Title, topic, name, path)
	}
}

// projectName asks for a project's name, which its topic takes too; one
// no other project of the server has.
func (w *wizard) projectName(srv *config.Server, base string) (string, error) {
	taken := func(n string) bool {
		return slices.ContainsFunc(srv.Projects, func(p config.Project) bool { return p.Name == n })
	}
	def := safeName(base)
	for i := 2; taken(def); i++ {
		def = fmt.Sprintf("%s-%d", safeName(base), i)
	}
	for {
		a, err := w.ask("Project name (the topic's name too)", def)
		if err != nil {
			return "", err
		}
		name := safeName(a)
		if !taken(name) {
			return name, nil
		}
		w.say("The bot already has a project named %q; type another name.", name)
	}
}
