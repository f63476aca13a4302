package state

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// Reply order. A turn's reply takes its place in its channel's order while
// Claude waits for its Stop hook, before the next turn runs, not when its
// hook is done: the hook of a slow turn may still be reading the transcript
// (or retrying Discord) when the next turn's hook is ready to post. A place
// is held by a live hook process (for a Stop, the run it detached to post
// the reply); posts and queued messages that come after it wait until it is
// given up, so replies appear in turn order whichever hook finishes first.

// Place is a turn's place in its channel's reply order, keyed by an
// OutboxKey taken when the turn's Stop arrived (its order).
type Place struct {
	ChannelID string    `json:"channel_id"`
	PID       int       `json:"pid"` // the hook process that holds it
	At        time.Time `json:"at"`
}

// MaxPlaceAge bounds how long a place holds its channel: a hook's whole
// run (its budget and the save to the outbox) with room to spare. An older
// place is a hook that died without giving it up.
const MaxPlaceAge = time.Minute

const placeVersion = 1

// Places are the held places in the reply order of every channel.
type Places struct {
	c *Collection[Place]
}

// OpenPlaces opens the reply-order places in d.
func OpenPlaces(d *Dir) (*Places, error) {
	c, err := newCollection[Place](d, "reply-order", placeVersion)
	if err != nil {
		return nil, err
	}
	return &Places{c: c}, nil
}

// Hold takes a place in channel's reply order for the calling process and
// returns its order (an OutboxKey) and the func that gives it up. Neither
// the order nor the place is synced to disk: a place lives only as long as
// its process, and taking it is on the path of every reply.
func (p *Places) Hold(ctx context.Context, s *Store, channel string) (string, func(), error) {
	order, err := p.HoldFor(ctx, s, channel, os.Getpid())
	if err != nil {
		return "", func() {}, err
	}
	return order, p.giver(ctx, s, order), nil
}

// HoldFor takes a place in channel's reply order for process pid (a child
// the caller started to post the reply, which gives it up: see Adopt) and
// returns its order.
func (p *Places) HoldFor(ctx context.Context, s *Store, channel string, pid int) (string, error) {
	order := s.outboxKey(false) // unique: no other record has this key
	pl := Place{ChannelID: channel, PID: pid, At: time.Now().UTC()}
	if err := p.c.Cache(ctx, order, pl); err != nil {
		return "", fmt.Errorf("hold reply place: %w", err)
	}
	return order, nil
}

// Adopt returns the func that gives up the place at order, which another
// process took in channel for the calling one (HoldFor); ok is false when
// there is no such place: it was never taken, or another holds it.
func (p *Places) Adopt(ctx context.Context, s *Store, order, channel string) (release func(), ok bool) {
	pl, err := p.c.Get(order)
	if err != nil || pl.PID != os.Getpid() || pl.ChannelID != channel {
		return func() {}, false
	}
	return p.giver(ctx, s, order), true
}

// Mine returns the order of a place held in channel for the calling
// process (one a parent took with HoldFor but never handed over), or "".
func (p *Places) Mine(channel string) string {
	all, _ := p.c.List()
	mine := ""
	for k, pl := range all {
		if pl.PID == os.Getpid() && pl.ChannelID == channel && (mine == "" || k < mine) {
			mine = k
		}
	}
	return mine
}

// giver is the func that gives up the place at order.
func (p *Places) giver(ctx context.Context, s *Store, order string) func() {
	return func() {
		// Not the caller's context: a place left behind holds the channel
		// until MaxPlaceAge.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lockTimeout)
		defer cancel()
		if err := p.c.Delete(ctx, order); err != nil {
			s.Dir.logger().Warn("reply place not given up", "order", order, "err", err)
		}
	}
}

// First returns the order of the earliest place held in channel before
// order ("" for any), or "" when there is none. Places of hooks that died,
// in any channel, are removed on the way.
func (p *Places) First(ctx context.Context, channel, order string) string {
	all, _ := p.c.List()
	first := ""
	now := time.Now()
	for k, pl := range all {
		if !pl.live(now) {
			_ = p.c.Delete(ctx, k) // whatever its channel: nobody else may look there
			continue
		}
		if pl.ChannelID != channel || (order != "" && k >= order) {
			continue
		}
		if first == "" || k < first {
			first = k
		}
	}
	return first
}

// Watch reports changes of the places (see Collection.Watch).
func (p *Places) Watch(ctx context.Context) (<-chan string, error) { return p.c.Watch(ctx) }

// live reports whether the place's hook still runs: its process exists and
// the place is younger than MaxPlaceAge (a pid reused since is not it).
func (pl Place) live(now time.Time) bool {
	if now.Sub(pl.At) > MaxPlaceAge || pl.PID <= 0 {
		return false
	}
	err := syscall.Kill(pl.PID, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// PartKey is the outbox key of part i of a message posted at order: the
// parts sort together, in order, after everything ordered before it.
func PartKey(order string, i int) string { return fmt.Sprintf("%s.%03d", order, i) }
