package discord

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/ccbridge/ccbridge/internal/chat"
)

// Missed is a message read back from a channel's history: what ccbridge
// may have missed while it was down.
type Missed struct {
	Event chat.MessageEvent // Server, ParentID and ThreadName left for the caller
	At    time.Time         // when it was created
	// Marked lists the emoji the bot itself reacted with.
	Marked []string
}

// historyPage is Discord's largest page of history.
const historyPage = 100

// After reads every message of a channel that came after the message
// afterID, oldest first, a page of 100 at a time (each retried like any
// call, rate limits honoured). Discord sorts every page newest first, and
// with after a page holds the messages right after that id, so the next
// page starts after the newest of it. With afterID "" only the latest
// page is read.
func (p *Poster) After(ctx context.Context, channelID, afterID string) ([]Missed, error) {
	var out []Missed
	for {
		var page []*discordgo.Message
		err := p.retry(ctx, func() error {
			var err error
			page, err = p.dg.ChannelMessages(channelID, historyPage, "", afterID, "", discordgo.WithContext(ctx))
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("read history of %s: %w", channelID, err)
		}
		start := len(out)
		for _, m := range page {
			out = append(out, missed(m))
		}
		slices.Reverse(out[start:])
		if afterID == "" || len(page) < historyPage {
			return out, nil
		}
		afterID = out[len(out)-1].Event.MessageID
	}
}

// MissedMessage reads one message of a channel as After does.
func (p *Poster) MissedMessage(ctx context.Context, channelID, messageID string) (Missed, error) {
	m, err := p.fetch(ctx, channelID, messageID) // history.go
	if err != nil {
		return Missed{}, err
	}
	return missed(m), nil
}

// MessageEvent is what a message says as the router sees it, live or read
// back; Server, ParentID and ThreadName are left for the caller.
func MessageEvent(m *discordgo.Message) chat.MessageEvent {
	ev := chat.MessageEvent{ChannelID: m.ChannelID, MessageID: m.ID, Content: m.Content, Type: int(m.Type), Flags: int(m.Flags)}
	if m.Author != nil {
		ev.Author = chat.User{ID: m.Author.ID, Name: m.Author.Username, Bot: m.Author.Bot}
	}
	for _, a := range m.Attachments {
		ev.Attachments = append(ev.Attachments, chat.Attachment{Name: a.Filename, URL: a.URL, Size: a.Size,
			ContentType: a.ContentType, DurationSecs: a.DurationSecs})
	}
	return ev
}

func missed(m *discordgo.Message) Missed {
	out := Missed{Event: MessageEvent(m), At: m.Timestamp}
	for _, r := range m.Reactions {
		if r != nil && r.Me && r.Emoji != nil {
			out.Marked = append(out.Marked, r.Emoji.Name)
		}
	}
	return out
}

// IsUnknownChannel reports whether err says the channel (or thread) no
// longer exists, or was never one this bot could see: Discord's 10003.
func IsUnknownChannel(err error) bool {
	var rest *discordgo.RESTError
	return errors.As(err, &rest) && rest.Message != nil && rest.Message.Code == discordgo.ErrCodeUnknownChannel
}
