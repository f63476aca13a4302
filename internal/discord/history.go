package discord

import (
	"context"
	"fmt"
	"time"

	"github.com/bwmarrin/discordgo"
)

// Seen is a message as read back from a channel's history.
type Seen struct {
	ID        string
	AuthorID  string
	AuthorBot bool
	Content   string
	// At is when the message last changed: its edit time, or its creation.
	At time.Time
}

// Recent reads up to limit (at most 100) of a channel's latest messages,
// newest first. The control panels of the other machines sharing a bot
// are read this way: Discord is the fleet's only shared medium.
func (p *Poster) Recent(ctx context.Context, channelID string, limit int) ([]Seen, error) {
	var msgs []*discordgo.Message
	err := p.retry(ctx, func() error {
		var err error
		msgs, err = p.dg.ChannelMessages(channelID, limit, "", "", "", discordgo.WithContext(ctx))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", channelID, err)
	}
	out := make([]Seen, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, seen(m))
	}
	return out, nil
}

// Me returns the bot's own user id.
func (p *Poster) Me(ctx context.Context) (string, error) {
	var id string
	err := p.retry(ctx, func() error {
		u, err := p.dg.User("@me", discordgo.WithContext(ctx))
		if err == nil {
			id = u.ID
		}
		return err
	})
	if err != nil {
		return "", fmt.Errorf("who am i: %w", err)
	}
	return id, nil
}

// Message reads one message of a channel.
func (p *Poster) Message(ctx context.Context, channelID, messageID string) (Seen, error) {
	m, err := p.fetch(ctx, channelID, messageID)
	if err != nil {
		return Seen{}, err
	}
	return seen(m), nil
}

// fetch reads one message, retrying what a retry can fix.
func (p *Poster) fetch(ctx context.Context, channelID, messageID string) (*discordgo.Message, error) {
	var m *discordgo.Message
	err := p.retry(ctx, func() error {
		var err error
		m, err = p.dg.ChannelMessage(channelID, messageID, discordgo.WithContext(ctx))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", messageID, err)
	}
	return m, nil
}

func seen(m *discordgo.Message) Seen {
	s := Seen{ID: m.ID, Content: m.Content, At: m.Timestamp}
	if m.EditedTimestamp != nil && m.EditedTimestamp.After(s.At) {
		s.At = *m.EditedTimestamp
	}
	if m.Author != nil {
		s.AuthorID, s.AuthorBot = m.Author.ID, m.Author.Bot
	}
	return s
}
