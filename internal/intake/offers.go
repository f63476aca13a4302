package intake

import (
	"context"
	"errors"
	"time"

	"github.com/ccbridge/ccbridge/internal/state"
)

// Why a Deliver anyway click changes nothing.
var (
	ErrOfferGone     = errors.New("the offer expired or was never made")
	ErrOfferUsed     = errors.New("the offer was used already")
	ErrOfferNotYours = errors.New("the offer is its author's")
)

// Offer records a Deliver anyway offer for a message missed too long ago:
// only author may use it, once, until expires.
func (b *Book) Offer(ctx context.Context, ref Ref, author string, now, expires time.Time) error {
	_, err := b.update(ctx, ref, func(c *state.Cursor) error {
		c.PruneOffers(now)
		if c.Offers == nil {
			c.Offers = map[string]state.Offer{}
		}
		c.Offers[ref.MessageID] = state.Offer{AuthorID: author, Expires: expires}
		return nil
	})
	return err
}

// UseOffer spends a message's offer for user and holds the message (it is
// older than the cursor by construction), all in one step; it returns the
// channel's cursor. ErrOfferGone, ErrOfferUsed and ErrOfferNotYours say
// why not.
func (b *Book) UseOffer(ctx context.Context, ref Ref, user string, now time.Time) (state.Cursor, error) {
	if b.cursors == nil {
		return state.Cursor{}, ErrOfferGone
	}
	return b.update(ctx, ref, func(c *state.Cursor) error {
		o, ok := c.Offers[ref.MessageID]
		switch {
		case !ok || now.After(o.Expires):
			return ErrOfferGone
		case o.Used:
			return ErrOfferUsed
		case o.AuthorID != user:
			return ErrOfferNotYours
		}
		o.Used = true
		c.Offers[ref.MessageID] = o
		hold(c, ref.MessageID, now)
		return nil
	})
}

// PutBack reopens the spent offer of a message still in flight (the daemon
// is stopping before it reached Claude), open until expires, and releases
// the message: its offer stands for it now. It reports whether there was
// such an offer.
func (b *Book) PutBack(ctx context.Context, ref Ref, expires time.Time) (bool, error) {
	if c, found, err := b.Cursor(ref.Server, ref.ChannelID); err != nil || !found || !c.Offers[ref.MessageID].Used {
		return false, err // nothing to put back: no record is made
	}
	back := false
	_, err := b.update(ctx, ref, func(c *state.Cursor) error {
		o, ok := c.Offers[ref.MessageID]
		if _, held := c.Held[ref.MessageID]; !ok || !o.Used || !held {
			return nil
		}
		o.Used, o.Expires = false, expires
		c.Offers[ref.MessageID] = o
		delete(c.Held, ref.MessageID)
		back = true
		return nil
	})
	return back, err
}
