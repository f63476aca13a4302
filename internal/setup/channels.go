package setup

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/discord"
)

// projects lets the person map channels to directories.
func (w *wizard) projects(ctx context.Context, guild discord.Guild, srv *config.Server, botID string) error {
	chs, err := w.client.TextChannels(ctx, guild.ID)
	if err != nil {
		return err
	}
	w.panelPrivacy(guild, srv, chs)
	for {
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
			// Visible to the owners and the bot only: everything ccbridge
			// posts there (commands, diffs, replies) stays theirs.
			created, err := w.client.CreateTextChannel(ctx, guild.ID, discord.ChannelName(a), botID, srv.OwnerIDs)
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
			w.say("Created #%s, visible to the owners and the bot only.", created.Name)
			chs = append(chs, created)
			ch = created
		}
		if ch.Public {
			w.say("Note: every member of %q can read #%s, and so everything ccbridge posts there (commands, diffs, replies).\n"+
				"Make it private: #%s → Edit Channel → Permissions → @everyone → View Channel off; allow yourself and the bot.", guild.Name, ch.Name, ch.Name)
		}
		if err := w.mapChannel(srv, ch); err != nil {
			return err
		}
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
