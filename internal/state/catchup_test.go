package state

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

func TestCursorSurvivesReopenAndNeverMovesBack(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "durable")
	reg, err := OpenRegistry(dir)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := OpenCursors(reg.Dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	key := CursorKey("home", "100000000000000003")
	if _, err := cur.Update(ctx, key, func(c *Cursor) error {
		c.Typed = &Typed{MessageID: "1300000000000000010", Session: "home-api", Text: "hi", At: time.Now()}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"1300000000000000010", "999", "1300000000000000009"} {
		if err := markHandled(ctx, cur, id); err != nil {
			t.Fatal(err)
		}
	}
	again, err := OpenCursors(reg.Dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := again.Get(key)
	if err != nil {
		t.Fatal(err)
	}
	if got.Last != "1300000000000000010" || got.Typed != nil || got.Server != "home" {
		t.Fatalf("cursor = %+v, want last 1300000000000000010 and no typed message", got)
	}
}

func TestSnowflakeLess(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		less bool
	}{{"", "1", true}, {"9", "10", true}, {"10", "9", false}, {"12", "12", false}, {"12", "13", true}} {
		if got := SnowflakeLess(tc.a, tc.b); got != tc.less {
			t.Errorf("SnowflakeLess(%q, %q) = %v", tc.a, tc.b, got)
		}
	}
}

func TestPruneOffers(t *testing.T) {
	now := time.Now()
	c := Cursor{Offers: map[string]Offer{"1": {Expires: now.Add(-time.Second)}, "2": {Expires: now.Add(time.Minute)}}}
	c.PruneOffers(now)
	if _, ok := c.Offers["1"]; ok || len(c.Offers) != 1 {
		t.Fatalf("offers = %v", c.Offers)
	}
}

// markHandled moves the test channel's cursor as the intake does.
func markHandled(ctx context.Context, c *Collection[Cursor], id string) error {
	_, err := c.Update(ctx, CursorKey("home", "100000000000000003"), func(cur *Cursor) error {
		cur.Server, cur.ChannelID, cur.Updated = "home", "100000000000000003", time.Now().UTC()
		cur.Handled(id)
		return nil
	})
	return err
}

// BenchmarkMarkHandled is the cost a handled message adds: one durable,
// locked, synced write of its channel's cursor.
func BenchmarkMarkHandled(b *testing.B) {
	reg, err := OpenRegistry(filepath.Join(b.TempDir(), "durable"))
	if err != nil {
		b.Fatal(err)
	}
	cur, err := OpenCursors(reg.Dir)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for i := 0; b.Loop(); i++ {
		if err := markHandled(ctx, cur, fmt.Sprintf("13%017d", i)); err != nil {
			b.Fatal(err)
		}
	}
}
