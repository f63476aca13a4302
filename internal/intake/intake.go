// Package intake keeps the books of the owners' messages on their way into
// a session, for any front end. In memory: which messages this process has
// claimed, so one read back by catch-up and also arriving live is taken
// once. Durably, beside each channel's catch-up cursor: every message in
// flight that newer ones may pass (a voice note being transcribed or
// reviewed, a Deliver anyway message queued behind newer ones). The cursor
// moves to the newest message handled, so without that record a restart
// would lose the ones it passed.
package intake

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/state"
)

// ErrGone is what a front end's history answers for a message (or a
// channel) that no longer exists.
var ErrGone = errors.New("no longer exists")

// Ref names a message of a channel (or thread) of a server.
type Ref struct {
	Server, ChannelID, ParentID, MessageID string
}

// Of is the Ref of a message event.
func Of(ev chat.MessageEvent) Ref {
	return Ref{Server: ev.Server, ChannelID: ev.ChannelID, ParentID: ev.ParentID, MessageID: ev.MessageID}
}

// Book is the books of one daemon. Its durable half needs cursors; without
// them (catch-up off) it only claims.
type Book struct {
	cursors *state.Collection[state.Cursor]

	mu      sync.Mutex
	claimed recent
}

// New opens the books on cursors (nil: nothing durable).
func New(cursors *state.Collection[state.Cursor]) *Book { return &Book{cursors: cursors} }

// Claim takes a message for this process: false when it was taken already.
// A message without an id (a prompt of ccbridge's own) is always taken.
func (b *Book) Claim(ref Ref) bool {
	if ref.MessageID == "" {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.claimed.has(ref.ChannelID, ref.MessageID) {
		return false
	}
	b.claimed.add(ref.ChannelID, ref.MessageID)
	return true
}

// Claimed reports whether this process took the message already.
func (b *Book) Claimed(ref Ref) bool {
	if ref.MessageID == "" {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.claimed.has(ref.ChannelID, ref.MessageID)
}

// update changes ref's channel cursor, filling in whose it is.
func (b *Book) update(ctx context.Context, ref Ref, fn func(c *state.Cursor) error) (state.Cursor, error) {
	if b.cursors == nil || ref.MessageID == "" {
		return state.Cursor{}, nil
	}
	return b.cursors.Update(ctx, state.CursorKey(ref.Server, ref.ChannelID), func(c *state.Cursor) error {
		if err := fn(c); err != nil {
			return err
		}
		c.Server, c.ChannelID, c.Updated = ref.Server, ref.ChannelID, time.Now().UTC()
		if ref.ParentID != "" {
			c.ParentID = ref.ParentID
		}
		return nil
	})
}

// Hold records a claimed message as in flight: newer messages of its
// channel may be handled first, and catch-up reads it back by id, whatever
// the cursor says, until it is Handled.
func (b *Book) Hold(ctx context.Context, ref Ref, now time.Time) error {
	_, err := b.update(ctx, ref, func(c *state.Cursor) error {
		hold(c, ref.MessageID, now)
		return nil
	})
	if err != nil {
		return fmt.Errorf("hold %s: %w", ref.MessageID, err)
	}
	return nil
}

func hold(c *state.Cursor, id string, now time.Time) {
	if c.Held == nil {
		c.Held = map[string]state.Held{}
	}
	if _, ok := c.Held[id]; !ok {
		c.Held[id] = state.Held{Since: now.UTC()}
	}
}

// Handled records a message handled (delivered, or told why not): the
// cursor moves up to it, and it is no longer held or typed.
func (b *Book) Handled(ctx context.Context, ref Ref) error {
	_, err := b.update(ctx, ref, func(c *state.Cursor) error {
		c.Handled(ref.MessageID)
		return nil
	})
	if err != nil {
		return fmt.Errorf("mark %s handled: %w", ref.MessageID, err)
	}
	return nil
}

// Typed records the text about to be typed for a message into a session's
// pane, so that catch-up after a crash asks what Claude received before
// typing it again.
func (b *Book) Typed(ctx context.Context, ref Ref, session, text string, at time.Time) error {
	_, err := b.update(ctx, ref, func(c *state.Cursor) error {
		c.Typed = &state.Typed{MessageID: ref.MessageID, Session: session, Text: text, At: at}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record %s typed: %w", ref.MessageID, err)
	}
	return nil
}

// Cursor reads a channel's cursor; found is false when the channel has
// none (catch-up never handled a message there).
func (b *Book) Cursor(server, channelID string) (c state.Cursor, found bool, err error) {
	if b.cursors == nil {
		return state.Cursor{}, false, nil
	}
	c, err = b.cursors.Get(state.CursorKey(server, channelID))
	if errors.Is(err, state.ErrNotFound) {
		return state.Cursor{}, false, nil
	}
	if err != nil {
		return c, false, fmt.Errorf("read the cursor of %s: %w", channelID, err)
	}
	return c, true, nil
}

// recentIDs is how many message ids of a channel recent keeps: far more
// than can wait unhandled (a session's queue holds 64), and every message
// catch-up reads back is one not handled yet.
const recentIDs = 1024

// recent remembers, per channel, the ids of the messages claimed in this
// process.
type recent struct {
	ids   map[string]map[string]bool
	order map[string][]string // oldest first
}

func (q *recent) has(ch, id string) bool { return q.ids[ch][id] }

func (q *recent) add(ch, id string) {
	if q.ids == nil {
		q.ids, q.order = map[string]map[string]bool{}, map[string][]string{}
	}
	if q.ids[ch] == nil {
		q.ids[ch] = map[string]bool{}
	}
	q.ids[ch][id] = true
	q.order[ch] = append(q.order[ch], id)
	if len(q.order[ch]) > recentIDs {
		delete(q.ids[ch], q.order[ch][0])
		q.order[ch] = q.order[ch][1:]
	}
}

// Release forgets a held message without moving the cursor: it was told
// why it was not delivered, and marked so where catch-up sees it.
func (b *Book) Release(ctx context.Context, ref Ref) error {
	c, found, err := b.Cursor(ref.Server, ref.ChannelID)
	if err != nil || !found {
		return err
	}
	if _, held := c.Held[ref.MessageID]; !held {
		return nil
	}
	_, err = b.update(ctx, ref, func(c *state.Cursor) error {
		delete(c.Held, ref.MessageID)
		return nil
	})
	if err != nil {
		return fmt.Errorf("release %s: %w", ref.MessageID, err)
	}
	return nil
}
