package discord

import (
	"context"
	"fmt"

	"github.com/bwmarrin/discordgo"
)

// StartPrivateThread starts a private thread in a channel, which only its
// members (and those with Manage Threads there) see and whose members may
// not add others (invitable false), and adds members to it. The first
// must be added, or the thread is deleted again and the error returned:
// nobody would see it. The others are added when they can be; missed
// lists those that could not be (not in the server, say). The create
// retries rate limits only, like StartThread.
func (p *Poster) StartPrivateThread(ctx context.Context, channelID, name string, members []string) (id string, missed []string, err error) {
	err = p.retryRateLimits(ctx, func() error {
		th, err := p.dg.ThreadStartComplex(channelID, &discordgo.ThreadStart{Name: name, Type: discordgo.ChannelTypeGuildPrivateThread,
			Invitable: false, AutoArchiveDuration: 24 * 60}, discordgo.WithContext(ctx))
		if err == nil {
			id = th.ID
		}
		return err
	})
	if err != nil {
		return "", nil, fmt.Errorf("start private thread in %s: %w", channelID, err)
	}
	for i, m := range members {
		// Adding a member twice is harmless: every failure is retried.
		err := p.retry(ctx, func() error { return p.dg.ThreadMemberAdd(id, m, discordgo.WithContext(ctx)) })
		if err == nil {
			continue
		}
		if i == 0 {
			if derr := p.retry(ctx, func() error { _, err := p.dg.ChannelDelete(id, discordgo.WithContext(ctx)); return err }); derr != nil {
				return "", nil, fmt.Errorf("add %s to private thread %s: %w (and the thread could not be deleted: %v)", m, id, err, derr)
			}
			return "", nil, fmt.Errorf("add %s to private thread %s: %w", m, id, err)
		}
		missed = append(missed, m)
	}
	return id, missed, nil
}

// EveryoneCanView reports whether every member of the channel's server may
// view it: @everyone's permissions and the channel's overwrite for it, as
// doctor and setup compute them.
func (p *Poster) EveryoneCanView(ctx context.Context, channelID string) (bool, error) {
	ch, err := p.dg.Channel(channelID, discordgo.WithContext(ctx))
	if err != nil {
		return false, fmt.Errorf("read channel %s: %w", channelID, meaning(err))
	}
	roles, err := p.dg.GuildRoles(ch.GuildID, discordgo.WithContext(ctx))
	if err != nil {
		return false, fmt.Errorf("read the roles of server %s: %w", ch.GuildID, meaning(err))
	}
	return everyoneCanView(ch.GuildID, roles, ch.PermissionOverwrites), nil
}
