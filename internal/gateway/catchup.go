package gateway

import (
	"context"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/ccbridge/ccbridge/internal/discord"
)

// Catcher is a Handler that reads back what a bot missed (the router's
// catch-up). On every READY (the first connection, and every new session
// after a resume failed: events were lost) it is asked which channels to
// read back, and on the GUILD_CREATE that follows, which threads: each
// one's catch-up is queued in that channel's queue before anything else,
// so it runs ahead of the messages arriving live on the new connection and
// the channel keeps its order. A RESUMED needs nothing: Discord replays
// what the session missed.
type Catcher interface {
	// CatchUpChannels lists the channels (not threads) to read back, each
	// with its parent ("").
	CatchUpChannels(server string) map[string]string
	// CatchUpThreads is told the guild's active threads (id → parent)
	// and returns those to read back, and the threads it knows that are
	// not active, to look up (id → parent).
	CatchUpThreads(server string, active map[string]string) (read, check map[string]string)
	// ThreadAway is told a thread it knows was archived (or deleted)
	// while the bot was away: THREAD_UPDATE and THREAD_DELETE are not
	// replayed after a new IDENTIFY.
	ThreadAway(server, threadID, parentID string, deleted bool)
	// CatchUp reads back what a channel missed and handles it.
	CatchUp(server, channelID, parentID string)
}

// catchUp queues the catch-up of every channel the handler names; it runs
// on the read loop, as the READY handler.
func (b *Bot) catchUp(h Handler) {
	c, ok := h.(Catcher)
	if !ok {
		return
	}
	server := b.Server.Name
	chans := c.CatchUpChannels(server)
	for ch, parent := range chans {
		b.serial.run(ch, func() { c.CatchUp(server, ch, parent) })
	}
	if len(chans) > 0 {
		b.log.Info("catching up on what was missed", "channels", len(chans))
	}
}

// catchUpThreads queues the catch-up of the threads the handler picks from
// the guild's active ones (GUILD_CREATE's threads: "all active threads in
// the guild that the current user has permission to view"), and looks up
// the ones it knows that are not among them, beside the read loop.
func (b *Bot) catchUpThreads(h Handler, threads []*discordgo.Channel) {
	c, ok := h.(Catcher)
	if !ok {
		return
	}
	server := b.Server.Name
	active := map[string]string{}
	for _, t := range threads {
		if t != nil && t.IsThread() && (t.ThreadMetadata == nil || !t.ThreadMetadata.Archived) {
			active[t.ID] = t.ParentID
		}
	}
	read, check := c.CatchUpThreads(server, active)
	for id, parent := range read {
		b.serial.run(id, func() { c.CatchUp(server, id, parent) })
	}
	if len(read)+len(check) > 0 {
		b.log.Info("catching up on threads", "active", len(read), "to look up", len(check))
	}
	if len(check) > 0 {
		go b.lookUpThreads(c, check)
	}
}

// lookUpTimeout bounds asking Discord about one thread.
const lookUpTimeout = 30 * time.Second

// lookUpThreads asks Discord what became of threads that are not active:
// archived (the handler stops their sessions, their messages are not read
// back), deleted (released), or active after all (read back).
func (b *Bot) lookUpThreads(c Catcher, check map[string]string) {
	server := b.Server.Name
	for id, parent := range check {
		ctx, cancel := context.WithTimeout(context.Background(), lookUpTimeout)
		ch, err := b.Session.Channel(id, discordgo.WithContext(ctx))
		cancel()
		switch {
		case discord.IsUnknownChannel(err):
			b.serial.run(id, func() { c.ThreadAway(server, id, parent, true) })
		case err != nil:
			b.log.Warn("could not look up a thread after connecting", "thread", id, "err", err)
		case ch.ThreadMetadata != nil && ch.ThreadMetadata.Archived:
			b.serial.run(id, func() { c.ThreadAway(server, id, parent, false) })
		default:
			b.serial.run(id, func() { c.CatchUp(server, id, parent) })
		}
	}
}
