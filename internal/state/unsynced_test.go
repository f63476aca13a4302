package state

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
)

// An unsynced claim is a claim: one creator wins, and the record is there
// for every reader at once, before it is synced; syncing a record deleted
// since is no error.
func TestCreateUnsyncedClaimsOnceAndIsSeenAtOnce(t *testing.T) {
	root := filepath.Join(t.TempDir(), "rt")
	c := testCollection(t, root)
	other := testCollection(t, root) // another process's view
	ctx := context.Background()
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := c.CreateUnsynced(ctx, "once", counter{N: i})
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d creators won, want 1", wins)
	}
	if ok, err := other.Create(ctx, "once", counter{N: 99}); ok || err != nil {
		t.Fatalf("a synced Create after the unsynced claim: %v, %v", ok, err)
	}
	if _, err := c.UpdateUnsynced(ctx, "once", func(v *counter) error { v.N = 42; return nil }); err != nil {
		t.Fatal(err)
	}
	if v, err := other.Get("once"); err != nil || v.N != 42 {
		t.Fatalf("read before the sync = %+v, %v", v, err)
	}
	if err := c.Sync("once"); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, "once"); err != nil {
		t.Fatal(err)
	}
	if err := c.Sync("once"); err != nil {
		t.Fatalf("sync of a deleted record: %v", err)
	}
}
