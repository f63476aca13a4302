package intake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/state"
)

// Inbox is the history of a front end whose platform keeps none a bot may
// read back (Telegram gives each update once, and forgets it when told it
// was received). The front end writes every message here before it tells
// the platform so; catch-up then reads the inbox as it reads Discord's
// channel history, so the one catch-up serves both.
type Inbox struct {
	c   *state.Collection[state.Inbox]
	now func() time.Time
	max int // messages kept per channel
}

// Kept is a message read back from an inbox.
type Kept struct {
	Event chat.MessageEvent
	At    time.Time // when it was sent
	Marks []string  // the emoji the bot reacted with
}

// An inbox keeps a message a week (any catch-up window is shorter: older
// messages are only offered, and those a week old are of no use) and at
// most inboxMax per channel, newest kept.
const (
	inboxKeep  = 7 * 24 * time.Hour
	inboxMax   = 1000
	latestPage = 100 // what After("") reads, as Discord's latest page
)

// NewInbox opens the inbox kept in c.
func NewInbox(c *state.Collection[state.Inbox]) *Inbox {
	return &Inbox{c: c, now: time.Now, max: inboxMax}
}

// Put keeps ev, sent at at, durably; a message kept already is kept once.
func (in *Inbox) Put(ctx context.Context, ev chat.MessageEvent, at time.Time) error {
	if ev.MessageID == "" {
		return errors.New("keep a message: it has no id")
	}
	raw, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("keep message %s: %w", ev.MessageID, err)
	}
	_, err = in.c.Update(ctx, state.CursorKey(ev.Server, ev.ChannelID), func(b *state.Inbox) error {
		b.Server, b.ChannelID = ev.Server, ev.ChannelID
		i, found := slices.BinarySearchFunc(b.Messages, ev.MessageID, byID)
		if found {
			return nil
		}
		b.Messages = slices.Insert(b.Messages, i, state.Received{ID: ev.MessageID, At: at.UTC(), Event: raw})
		in.prune(b)
		return nil
	})
	if err != nil {
		return fmt.Errorf("keep message %s: %w", ev.MessageID, err)
	}
	return nil
}

func byID(r state.Received, id string) int {
	switch {
	case r.ID == id:
		return 0
	case state.SnowflakeLess(r.ID, id):
		return -1
	}
	return 1
}

func (in *Inbox) prune(b *state.Inbox) {
	cutoff := in.now().Add(-inboxKeep)
	b.Messages = slices.DeleteFunc(b.Messages, func(r state.Received) bool { return r.At.Before(cutoff) })
	if n := len(b.Messages); n > in.max {
		b.Messages = slices.Delete(b.Messages, 0, n-in.max)
	}
}

// After returns, oldest first, every message kept for the channel after
// afterID; with afterID "" only the latest ones.
func (in *Inbox) After(server, channelID, afterID string) ([]Kept, error) {
	b, err := in.read(server, channelID)
	if err != nil {
		return nil, err
	}
	msgs := b.Messages
	if afterID == "" {
		msgs = msgs[max(0, len(msgs)-latestPage):]
	} else {
		i, found := slices.BinarySearchFunc(msgs, afterID, byID)
		if found {
			i++
		}
		msgs = msgs[i:]
	}
	out := make([]Kept, 0, len(msgs))
	for _, r := range msgs {
		k, err := kept(r)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, nil
}

// Message reads one kept message; ErrGone when it is not kept (never
// received, or pruned).
func (in *Inbox) Message(server, channelID, messageID string) (Kept, error) {
	b, err := in.read(server, channelID)
	if err != nil {
		return Kept{}, err
	}
	i, found := slices.BinarySearchFunc(b.Messages, messageID, byID)
	if !found {
		return Kept{}, fmt.Errorf("message %s: %w", messageID, ErrGone)
	}
	return kept(b.Messages[i])
}

// Mark records that the bot reacted to a kept message with emoji, as
// Discord's history shows the bot's own reactions.
func (in *Inbox) Mark(ctx context.Context, server, channelID, messageID, emoji string) error {
	_, err := in.c.Update(ctx, state.CursorKey(server, channelID), func(b *state.Inbox) error {
		i, found := slices.BinarySearchFunc(b.Messages, messageID, byID)
		if found && !slices.Contains(b.Messages[i].Marks, emoji) {
			b.Messages[i].Marks = append(b.Messages[i].Marks, emoji)
		}
		b.Server, b.ChannelID = server, channelID
		return nil
	})
	if err != nil {
		return fmt.Errorf("mark message %s: %w", messageID, err)
	}
	return nil
}

func (in *Inbox) read(server, channelID string) (state.Inbox, error) {
	b, err := in.c.Get(state.CursorKey(server, channelID))
	if errors.Is(err, state.ErrNotFound) {
		return state.Inbox{}, nil
	}
	if err != nil {
		return b, fmt.Errorf("read the inbox of %s: %w", channelID, err)
	}
	return b, nil
}

func kept(r state.Received) (Kept, error) {
	k := Kept{At: r.At, Marks: r.Marks}
	if err := json.Unmarshal(r.Event, &k.Event); err != nil {
		return Kept{}, fmt.Errorf("read kept message %s: %w", r.ID, err)
	}
	return k, nil
}
