package intake

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/state"
)

func book(t *testing.T) *Book {
	t.Helper()
	reg, err := state.OpenRegistry(filepath.Join(t.TempDir(), "durable"))
	if err != nil {
		t.Fatal(err)
	}
	cursors, err := state.OpenCursors(reg.Dir)
	if err != nil {
		t.Fatal(err)
	}
	return New(cursors)
}

func ref(id string) Ref { return Ref{Server: "home", ChannelID: "100000000000000003", MessageID: id} }

// A message is claimed once per process; one without an id always.
func TestClaimOnce(t *testing.T) {
	b := New(nil)
	if !b.Claim(ref("1300000000000000001")) || b.Claim(ref("1300000000000000001")) {
		t.Fatal("claimed twice, or not at all")
	}
	if !b.Claim(ref("")) || !b.Claim(ref("")) {
		t.Fatal("a message without an id was refused")
	}
}

// A held message stays in the cursor however far Last moves past it, until
// it is handled; Release forgets it without moving Last.
func TestHeldSurvivesTheCursorPassingIt(t *testing.T) {
	b, ctx := book(t), context.Background()
	now := time.Now()
	for _, id := range []string{"1300000000000000001", "1300000000000000002"} {
		if err := b.Hold(ctx, ref(id), now); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Handled(ctx, ref("1300000000000000003")); err != nil {
		t.Fatal(err)
	}
	c, found, err := b.Cursor("home", "100000000000000003")
	if err != nil || !found || len(c.Held) != 2 || c.Last != "1300000000000000003" {
		t.Fatalf("cursor = %+v, %v, %v", c, found, err)
	}
	if err := b.Handled(ctx, ref("1300000000000000001")); err != nil {
		t.Fatal(err)
	}
	if err := b.Release(ctx, ref("1300000000000000002")); err != nil {
		t.Fatal(err)
	}
	if c, _, _ := b.Cursor("home", "100000000000000003"); len(c.Held) != 0 || c.Last != "1300000000000000003" {
		t.Fatalf("cursor = %+v", c)
	}
}

// Deliver anyway: spent once by its author, held while in flight; at a stop
// put back (usable again, nothing held); an offer never used is not.
func TestOfferUsePutBack(t *testing.T) {
	b, ctx := book(t), context.Background()
	now := time.Now()
	old := ref("1300000000000000001")
	if back, err := b.PutBack(ctx, old, now.Add(time.Hour)); back || err != nil {
		t.Fatalf("put back with no cursor: %v, %v", back, err)
	}
	if _, found, _ := b.Cursor("home", "100000000000000003"); found {
		t.Fatal("PutBack made a cursor")
	}
	if err := b.Offer(ctx, old, "owner", now, now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if back, _ := b.PutBack(ctx, old, now.Add(time.Hour)); back {
		t.Fatal("an unused offer was put back")
	}
	if _, err := b.UseOffer(ctx, old, "someone", now); !errors.Is(err, ErrOfferNotYours) {
		t.Fatalf("someone else: %v", err)
	}
	if _, err := b.UseOffer(ctx, old, "owner", now.Add(2*time.Minute)); !errors.Is(err, ErrOfferGone) {
		t.Fatalf("expired: %v", err)
	}
	c, err := b.UseOffer(ctx, old, "owner", now)
	if err != nil || len(c.Held) != 1 {
		t.Fatalf("use: %+v, %v", c, err)
	}
	if _, err := b.UseOffer(ctx, old, "owner", now); !errors.Is(err, ErrOfferUsed) {
		t.Fatalf("used twice: %v", err)
	}
	if back, err := b.PutBack(ctx, old, now.Add(time.Hour)); !back || err != nil {
		t.Fatalf("put back: %v, %v", back, err)
	}
	if c, _, _ := b.Cursor("home", "100000000000000003"); len(c.Held) != 0 || c.Offers[old.MessageID].Used {
		t.Fatalf("after put back: %+v", c)
	}
	if _, err := b.UseOffer(ctx, old, "owner", now.Add(30*time.Minute)); err != nil {
		t.Fatalf("the offer put back does not work: %v", err)
	}
}
