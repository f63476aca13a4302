// Package guard binds every acting control (a button, a menu, a form) to
// the message ccbridge drew it on, as it drew it. Anyone holding the bot's
// token (another machine sharing it, a model that read it) can edit
// ccbridge's messages or post copies carrying the same controls; an action
// counts only from the message ccbridge recorded, still showing the face it
// recorded (its text, its controls and its attachments). Permission cards
// keep their binding in their request record; every other acting message
// keeps it here, in the durable state.
//
// The package is front-end neutral: it knows messages, controls and faces
// (chat), and records (state), and no chat platform, router or session.
package guard

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/redact"
	"github.com/ccbridge/ccbridge/internal/state"
)

// Policy is what an action needs of the message it came from. Every kind
// of control is declared with one; there is no default.
type Policy int

const (
	// Bound actions act (press a key, merge, delete, send): they count only
	// from the bound message showing its bound face.
	Bound Policy = iota + 1
	// Inert actions change nothing a person did not see (Refresh, Keep, a
	// cancel, a refusal): they may come from any message.
	Inert
)

func (p Policy) String() string {
	switch p {
	case Bound:
		return "bound"
	case Inert:
		return "inert"
	}
	return fmt.Sprintf("policy(%d)", int(p))
}

// Valid reports whether p is one of the declared policies.
func (p Policy) Valid() bool { return p == Bound || p == Inert }

// Shown is the message an action came from, as the front end reports it:
// its id, text, controls and attachments' ids.
type Shown struct {
	ID      string
	Content string
	Rows    []chat.Row
	FileIDs []string
}

// FaceHash is the hash a binding records for a message showing content and
// rows with attachments fileIDs.
func FaceHash(content string, rows []chat.Row, fileIDs []string) string {
	return state.CardHash(chat.Face(content, rows), fileIDs)
}

// Face is the hash a binding records for message m as drawn (Masked: as
// a person sees it) with attachments fileIDs.
func Face(m chat.Message, fileIDs []string) string {
	m = Masked(m)
	return FaceHash(m.Content, m.Rows, fileIDs)
}

// Matches reports whether s is the message messageID, showing the face
// whose hash is face. It is the one comparison every bound action passes,
// cards included.
func Matches(messageID, face string, s Shown) bool {
	return messageID != "" && face != "" && s.ID == messageID && FaceHash(s.Content, s.Rows, s.FileIDs) == face
}

// ErrChanged is returned for an action from a message that is not bound,
// or no longer shows what was drawn.
var ErrChanged = errors.New("the message is not the one ccbridge drew, as drawn")

// ErrSpent is returned for an action from a message ccbridge has since
// redrawn without controls: it was answered.
var ErrSpent = errors.New("the message was answered already")

// Refusal is what the person is told when a bound action is refused.
const Refusal = "⚠️ This message was changed after ccbridge posted it (or it is a copy), so nothing was done."

// SpentRefusal is what a click on a message answered meanwhile is told.
const SpentRefusal = "This was answered already, so nothing was done."

// RefusalFor is what the person is told for a refusal err.
func RefusalFor(err error) string {
	if errors.Is(err, ErrSpent) {
		return SpentRefusal
	}
	return Refusal
}

// Bindings are kept this long after the message was last drawn, and at
// most this many: an older message's controls act no more.
const (
	MaxAge      = 30 * 24 * time.Hour
	MaxBindings = 5000
	pruneEvery  = time.Hour
)

// RecordWait bounds how long Check waits for a binding to be recorded or
// redrawn: a quick click can reach ccbridge before it has recorded what
// Discord just took (the click and the post's answer race), and an
// interaction must be answered within 3 seconds.
const RecordWait = 2 * time.Second

// Guard records bindings and checks actions against them.
type Guard struct {
	bindings *state.Collection[state.Binding]
	now      func() time.Time
	// Wait is how long Check waits before refusing (RecordWait).
	Wait time.Duration

	mu     sync.Mutex // guards pruned
	pruned time.Time
}

// New returns a guard over a bindings collection (state.OpenBindings). A
// nil collection binds nothing and refuses every bound action.
func New(bindings *state.Collection[state.Binding]) *Guard {
	return &Guard{bindings: bindings, now: time.Now, Wait: RecordWait}
}

// Bind records that message messageID of server's channel now shows m,
// with attachments fileIDs. m is the message as drawn; what it shows is m
// masked as every text leaving ccbridge is (redact.String on each string,
// then cut to the limit). A message redrawn with no controls is spent:
// nothing acts from it any more, and a click that was on its way (a
// double tap) is told it was answered.
func (g *Guard) Bind(ctx context.Context, server, channelID, messageID string, m chat.Message, fileIDs []string) error {
	if messageID == "" {
		return errors.New("bind: no message id")
	}
	if g.bindings == nil {
		return errors.New("bind: no bindings store")
	}
	b := state.Binding{Server: server, ChannelID: channelID, MessageID: messageID, Face: Face(m, fileIDs), Drawn: g.now().UTC(), Spent: len(m.Rows) == 0}
	if _, err := g.bindings.Update(ctx, messageID, func(cur *state.Binding) error { *cur = b; return nil }); err != nil {
		return fmt.Errorf("bind %s: %w", messageID, err)
	}
	g.prune(ctx)
	return nil
}

// Unbind forgets a message's binding.
func (g *Guard) Unbind(ctx context.Context, messageID string) error {
	if g.bindings == nil {
		return nil
	}
	if err := g.bindings.Delete(ctx, messageID); err != nil && !errors.Is(err, state.ErrNotFound) {
		return fmt.Errorf("unbind %s: %w", messageID, err)
	}
	return nil
}

// Check returns nil when s is a message of server's channel bound within
// MaxAge and showing its bound face; ErrSpent when that message has been
// redrawn without controls since; ErrChanged otherwise, after waiting up
// to Wait for the binding to be recorded or redrawn to match.
func (g *Guard) Check(ctx context.Context, server, channelID string, s Shown) error {
	if g.bindings == nil || s.ID == "" {
		return ErrChanged
	}
	ctx, cancel := context.WithTimeout(ctx, g.Wait)
	defer cancel()
	tick := time.NewTicker(checkPoll)
	defer tick.Stop()
	for {
		err := g.check(server, channelID, s)
		if !errors.Is(err, ErrChanged) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-tick.C:
		}
	}
}

// checkPoll is how often Check looks again while it waits.
const checkPoll = 50 * time.Millisecond

func (g *Guard) check(server, channelID string, s Shown) error {
	b, err := g.bindings.Get(s.ID)
	switch {
	case err != nil || b.Server != server || b.ChannelID != channelID || g.now().Sub(b.Drawn) > MaxAge:
		return ErrChanged
	case b.Spent:
		return ErrSpent
	case !Matches(b.MessageID, b.Face, s):
		return ErrChanged
	}
	return nil
}

// prune drops, at most once per pruneEvery, bindings older than MaxAge and
// the oldest beyond MaxBindings.
func (g *Guard) prune(ctx context.Context) {
	g.mu.Lock()
	due := g.now().Sub(g.pruned) >= pruneEvery
	if due {
		g.pruned = g.now()
	}
	g.mu.Unlock()
	if due {
		_, _ = g.bindings.Prune(ctx, g.now().Add(-MaxAge), MaxBindings)
	}
}

// Masked is m as a person sees it: every text masked on its way out (the
// front ends' transports mask each string they send), and content that
// masks made longer cut to the limit, marked.
func Masked(m chat.Message) chat.Message {
	out := chat.Message{Content: redact.String(m.Content)}
	if out.Content != m.Content {
		if r := []rune(out.Content); len(r) > chat.Limit {
			out.Content = string(r[:chat.Limit-1]) + "…"
		}
	}
	for _, row := range m.Rows {
		var o chat.Row
		for _, b := range row.Buttons {
			b.Label, b.CustomID = redact.String(b.Label), redact.String(b.CustomID)
			o.Buttons = append(o.Buttons, b)
		}
		if s := row.Select; s != nil {
			sel := *s
			sel.CustomID, sel.Placeholder, sel.Options = redact.String(s.CustomID), redact.String(s.Placeholder), nil
			for _, op := range s.Options {
				op.Label, op.Value, op.Description = redact.String(op.Label), redact.String(op.Value), redact.String(op.Description)
				sel.Options = append(sel.Options, op)
			}
			o.Select = &sel
		}
		out.Rows = append(out.Rows, o)
	}
	return out
}
