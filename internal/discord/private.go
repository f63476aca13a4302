package discord

import (
	"github.com/bwmarrin/discordgo"
)

// Project channels are the owners' alone: everything ccbridge posts there
// (commands on cards, /screen, diffs, replies) is readable by whoever can
// view the channel.

// ownerAllow is what an owner needs in a project channel: what the bot
// needs, less managing threads. A bot may only allow permissions it has,
// and these are all in the invite's set.
var ownerAllow = NeededBits() &^ PermManageThreads

// privateOverwrites hides a new channel from @everyone (whose role id is
// the guild's) and lets the bot and each owner in.
func privateOverwrites(guildID, botID string, ownerIDs []string) []*discordgo.PermissionOverwrite {
	ows := []*discordgo.PermissionOverwrite{{ID: guildID, Type: discordgo.PermissionOverwriteTypeRole, Deny: PermViewChannel}}
	if botID != "" {
		ows = append(ows, &discordgo.PermissionOverwrite{ID: botID, Type: discordgo.PermissionOverwriteTypeMember, Allow: NeededBits()})
	}
	for _, id := range ownerIDs {
		if id != botID {
			ows = append(ows, &discordgo.PermissionOverwrite{ID: id, Type: discordgo.PermissionOverwriteTypeMember, Allow: ownerAllow})
		}
	}
	return ows
}

// everyoneCanView reports whether @everyone may view a channel: the
// @everyone role's permissions, then the channel's overwrite for it.
func everyoneCanView(guildID string, roles []*discordgo.Role, ows []*discordgo.PermissionOverwrite) bool {
	var p int64
	for _, r := range roles {
		if r.ID == guildID {
			p = r.Permissions
		}
	}
	if p&permAdministrator != 0 {
		return true
	}
	for _, o := range ows {
		if o.Type == discordgo.PermissionOverwriteTypeRole && o.ID == guildID {
			p = p&^o.Deny | o.Allow
		}
	}
	return p&PermViewChannel != 0
}
