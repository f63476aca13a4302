package setup

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/discord"
)

// projects lets the person map channels to directories; it returns the
// server's text channels as they are now.
func (w *wizard) projects(ctx context.Context, guild discord.Guild, srv *config.Server, botID string) ([]discord.TextChannel, error) {
	chs, err := w.client.TextChannels(ctx, guild.ID)
	if err != nil {
		return nil, err
	}
	w.panelPrivacy(guild, srv, chs)
	for {
		w.listChannels(guild, srv, chs)
		a, err := w.ask("Channel to map to a project directory: its number, or a new name to create it (Enter when done)", "")
		if err != nil {
			return nil, err
		}
		if a == "" {
			if len(srv.Projects) == 0 {
				w.say("No project mapped yet: the bot would answer nothing. Map at least one channel.")
				continue
			}
			return chs, nil
		}
		ch, ok, err := w.channel(ctx, guild, srv, botID, &chs, a)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if ch.Public {
			w.say("Note: every member of %q can read #%s, and so everything ccbridge posts there (commands, diffs, replies).\n"+
				"Make it private: #%s → Edit Channel → Permissions → @everyone → View Channel off; allow yourself and the bot.", guild.Name, ch.Name, ch.Name)
		}
		if err := w.mapChannel(srv, ch); err != nil {
			return nil, err
		}
	}
}

// listChannels shows the server's text channels, numbered, with what each
// is mapped to.
func (w *wizard) listChannels(guild discord.Guild, srv *config.Server, chs []discord.TextChannel) {
	w.say("\nText channels of %q:", guild.Name)
	for i, ch := range chs {
		mark := ""
		if p := projectOf(srv, ch.ID); p != nil {
			mark = fmt.Sprintf("  → project %s (%s)", p.Name, p.Path)
		} else if ch.ID == srv.GeneralChannelID {
			mark = "  → control panel"
		}
		if ch.Public {
			mark += "  (every member can read it)"
		}
		w.say("  %d. #%s%s", i+1, ch.Name, mark)
	}
	for _, p := range srv.Projects {
		if !slices.ContainsFunc(chs, func(c discord.TextChannel) bool { return c.ID == p.ChannelID }) {
			w.say("  (project %s maps channel %s, which is not a text channel of this server: fix it in the config)", p.Name, p.ChannelID)
		}
	}
}

// channel turns an answer into a channel: a number of the list, or a new
// name, created (visible to the owners and the bot only) or, when the bot
// may not, created by the person and then found by that name. ok is false
// when the answer gave no channel and the question is asked again.
func (w *wizard) channel(ctx context.Context, guild discord.Guild, srv *config.Server, botID string, chs *[]discord.TextChannel, a string) (ch discord.TextChannel, ok bool, err error) {
	if n, err := strconv.Atoi(a); err == nil {
		if n < 1 || n > len(*chs) {
			w.say("Type a number between 1 and %d.", len(*chs))
			return ch, false, nil
		}
		return (*chs)[n-1], true, nil
	}
	name := discord.ChannelName(a)
	// Visible to the owners and the bot only: everything ccbridge posts
	// there (commands, diffs, replies) stays theirs.
	created, err := w.client.CreateTextChannel(ctx, guild.ID, name, botID, srv.OwnerIDs)
	if discord.HTTPStatus(err) == 403 {
		w.say("The bot may not create channels (the invite leaves out Manage Channels on purpose).\n"+
			"Create #%s in Discord yourself, then press Enter here.", name)
		if _, err := w.ask("Press Enter when it exists", ""); err != nil {
			return ch, false, err
		}
		if *chs, err = w.client.TextChannels(ctx, guild.ID); err != nil {
			return ch, false, err
		}
		if i := slices.IndexFunc(*chs, func(c discord.TextChannel) bool { return c.Name == name }); i >= 0 {
			w.say("Found #%s.", name)
			return (*chs)[i], true, nil
		}
		w.say("There is no #%s yet (the bot must be able to see it): create it, or pick a channel from the list.", name)
		w.listChannels(guild, srv, *chs)
		return ch, false, nil
	}
	if st := discord.HTTPStatus(err); st >= 400 && st < 500 {
		// A name Discord refuses (empty once cleaned, too long…): failing
		// here would lose every answer so far.
		w.say("Discord refused to create #%s: %v\nType another name, or the number of an existing channel.", name, err)
		return ch, false, nil
	}
	if err != nil {
		return ch, false, err
	}
	w.say("Created #%s, visible to the owners and the bot only.", created.Name)
	*chs = append(*chs, created)
	return created, true, nil
}

// panel offers a channel for the control panel (general_channel_id): a
// message listing every session, with buttons. Enter goes on without one.
func (w *wizard) panel(ctx context.Context, guild discord.Guild, srv *config.Server, botID string, chs []discord.TextChannel) error {
	w.say("\nThe control panel is a message in a channel of its own that shows every session, with buttons (optional).")
	for {
		a, err := w.ask("Channel for the control panel: its number above, or a new name to create it (Enter for none)", "")
		if err != nil || a == "" {
			return err
		}
		ch, ok, err := w.channel(ctx, guild, srv, botID, &chs, a)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if p := projectOf(srv, ch.ID); p != nil {
			w.say("#%s is the channel of project %s; the panel needs a channel of its own.", ch.Name, p.Name)
			continue
		}
		srv.GeneralChannelID = ch.ID
		w.say("Control panel: #%s.", ch.Name)
		return nil
	}
}

// panelPrivacy says when the control-panel channel, where /open works
// once open_roots is set, is one every member can read: /open's threads
// are private, but its answers and the panel name the folders opened.
func (w *wizard) panelPrivacy(guild discord.Guild, srv *config.Server, chs []discord.TextChannel) {
	if len(srv.OpenRoots) == 0 {
		return
	}
	for _, ch := range chs {
		if ch.ID == srv.GeneralChannelID && ch.Public {
			w.say("Note: every member of %q can read #%s, the control-panel channel, where /open works (open_roots is set).\n"+
				"/open starts private threads there (only the owners, and members with Manage Threads, see them), but its answers and the panel name the folders opened.\n"+
				"Make it private: #%s → Edit Channel → Permissions → @everyone → View Channel off; allow yourself and the bot.", guild.Name, ch.Name, ch.Name)
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
		var ok bool
		if path, _, ok = w.projectDir(a); ok {
			break
		}
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

// projectDir reads a typed project directory: the path to store (clean,
// and as ~/… when typed so and still under the home directory) and the
// absolute one; ok is false, with the reason said, when it cannot be one.
func (w *wizard) projectDir(a string) (path, abs string, ok bool) {
	abs, err := config.ExpandHome(a)
	if err != nil || !filepath.IsAbs(abs) {
		w.say("%q is not an absolute path or ~/path.", a)
		return "", "", false
	}
	abs = filepath.Clean(abs)
	if fi, err := os.Stat(abs); err != nil {
		w.say("Note: %s does not exist yet; sessions there start once it does.", abs)
	} else if !fi.IsDir() {
		w.say("%s is not a directory.", abs)
		return "", "", false
	}
	path = abs
	if strings.HasPrefix(a, "~") {
		path = tildePath(abs)
	}
	return path, abs, true
}
