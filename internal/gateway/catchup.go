package gateway

// Catcher is a Handler that reads back what a bot missed (the router's
// catch-up). On every READY (the first connection, and every new session
// after a resume failed: events were lost) it is asked which channels to
// read back, and each one's catch-up is queued in that channel's queue
// before anything else, so it runs ahead of the messages arriving live on
// the new connection and the channel keeps its order. A RESUMED needs
// nothing: Discord replays what the session missed.
type Catcher interface {
	// CatchUpChannels lists the channels to read back, each with its
	// parent ("" for a channel that is not a thread).
	CatchUpChannels(server string) map[string]string
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
