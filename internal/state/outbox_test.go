package state

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// A place held by a hook that died (its process gone, or too old to be
// the process that took it) holds nothing, and is cleared away, in any
// channel.
func TestPlacesOfDeadHooksHoldNothing(t *testing.T) {
	ctx := context.Background()
	s, err := OpenStore(filepath.Join(t.TempDir(), "rt"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := OpenPlaces(s.Dir)
	if err != nil {
		t.Fatal(err)
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	dead, old := s.OutboxKey(), s.OutboxKey()
	p.c.Create(ctx, dead, Place{ChannelID: "c1", PID: gone.Process.Pid, At: time.Now().UTC()})
	p.c.Create(ctx, old, Place{ChannelID: "c9", PID: 1, At: time.Now().Add(-2 * MaxPlaceAge).UTC()})
	if got := p.First(ctx, "c1", ""); got != "" {
		t.Fatalf("First = %q, want none", got)
	}
	if all, _ := p.c.List(); len(all) != 0 {
		t.Errorf("left behind: %v", all)
	}
	// A live one holds its channel, for what comes after it only.
	order, release, err := p.Hold(ctx, s, "c1")
	if err != nil {
		t.Fatal(err)
	}
	later := s.OutboxKey()
	if p.First(ctx, "c1", later) != order || p.First(ctx, "c1", order) != "" || p.First(ctx, "c2", later) != "" {
		t.Errorf("First: %q before %q, %q before itself, %q in another channel", p.First(ctx, "c1", later), later, p.First(ctx, "c1", order), p.First(ctx, "c2", later))
	}
	release()
	if p.First(ctx, "c1", later) != "" {
		t.Error("a place given up still holds")
	}
	if k := PartKey(order, 1); !(PartKey(order, 0) < k && k < later && order < k) {
		t.Errorf("part keys do not sort between %q and %q: %q", order, later, k)
	}
}

// A place taken for another process (the child that posts a reply) is
// held while that process lives, and only that process can adopt it, in
// its channel.
func TestPlaceHeldForAChild(t *testing.T) {
	ctx := context.Background()
	s, err := OpenStore(filepath.Join(t.TempDir(), "rt"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := OpenPlaces(s.Dir)
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command("sleep", "10")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Wait()
	defer child.Process.Kill()
	theirs, err := p.HoldFor(ctx, s, "c1", child.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.Adopt(ctx, s, theirs, "c1"); ok {
		t.Error("adopted a place held for another process")
	}
	if p.First(ctx, "c1", s.OutboxKey()) != theirs {
		t.Error("a place held for a live child holds nothing")
	}
	mine, err := p.HoldFor(ctx, s, "c1", os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.Adopt(ctx, s, mine, "c2"); ok {
		t.Error("adopted a place in another channel")
	}
	release, ok := p.Adopt(ctx, s, mine, "c1")
	if !ok {
		t.Fatal("could not adopt the place held for this process")
	}
	release()
	if _, err := p.c.Get(mine); err == nil {
		t.Error("an adopted place given up is still there")
	}
	child.Process.Kill()
	child.Wait()
	if got := p.First(ctx, "c1", s.OutboxKey()); got != "" {
		t.Errorf("the place of a child that died holds: %q", got)
	}
}
