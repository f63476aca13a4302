package telegram

import (
	"context"
	"errors"
	"fmt"
	"strconv"
)

// Private threads. Every member of a group reads every topic, so a thread
// only one person may see (an opened folder's) is a topic of that person's
// private chat with the bot: Telegram allows topics there once the bot's
// forum topic mode is on in @BotFather (getMe's has_topics_enabled) and
// the person has started the bot. Its record names the channel it was
// asked from as its parent, as a group topic's does.

// The refusals of a private thread say how to fix them: they are told in
// the group, which must learn nothing else.
var (
	ErrNoTopicMode = errors.New("my private chats have no topics: turn on topics for me in @BotFather " +
		"(/mybots → this bot → Bot Settings → Threaded Mode), then try again")
	ErrNotStarted = errors.New("I can't open a topic in our private chat before you start me: " +
		"open a chat with me and press Start, then try again")
)

// StartPrivateThread opens a topic in the private chat of members[0] (the
// person who asked); the other members are not added: a private chat has
// one person.
func (p *Poster) StartPrivateThread(ctx context.Context, channelID, name string, members []string) (string, []string, error) {
	if len(members) == 0 {
		return "", nil, fmt.Errorf("start private topic from %s: nobody to open it for", channelID)
	}
	uid, err := strconv.ParseInt(members[0], 10, 64)
	if err != nil || uid <= 0 {
		return "", nil, fmt.Errorf("start private topic from %s: %q is not a person", channelID, members[0])
	}
	// Asked each time: the mode may be turned on while ccbridge runs.
	var me user
	if err := p.c.call(ctx, "getMe", map[string]any{}, &me, true); err != nil {
		return "", nil, fmt.Errorf("start private topic from %s: %w", channelID, err)
	}
	if !me.HasTopicsEnabled {
		return "", nil, ErrNoTopicMode
	}
	id, err := p.startTopic(ctx, uid, channelID, name)
	switch {
	case unreachable(err): // private.go
		return "", nil, fmt.Errorf("%w (%w)", ErrNotStarted, err)
	case err != nil:
		return "", nil, fmt.Errorf("start private topic from %s: %w", channelID, err)
	}
	return id, nil, nil
}

// privateThread reports whether m is its sender's message in a topic
// ccbridge opened in their private chat: a thread's, as in the group.
func (b *Bot) privateThread(m *inMessage) bool {
	if m.From == nil || m.Chat.ID != m.From.ID || !m.IsTopicMessage || m.MessageThreadID == 0 {
		return false
	}
	t, ok := b.p.Topic(m.place().ChannelID())
	return ok && t.Server == b.o.Server
}
