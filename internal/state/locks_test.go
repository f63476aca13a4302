package state

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// A pane lock excludes every other holder, in this process (another open
// file) as in others, until it is released.
func TestLockPaneExcludesOtherHolders(t *testing.T) {
	store, err := OpenStore(filepath.Join(t.TempDir(), "rt"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	unlock, err := store.Dir.LockPane(ctx, "home-api")
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := store.Dir.LockPane(short, "home-api"); err == nil {
		t.Fatal("a second holder got the pane lock")
	}
	other, err := store.Dir.LockPane(ctx, "home-web")
	if err != nil {
		t.Fatalf("another session's lock: %v", err)
	}
	other()
	unlock()
	again, err := store.Dir.LockPane(ctx, "home-api")
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	again()
	if _, err := store.Dir.LockPane(ctx, "../x"); !errors.Is(err, ErrBadKey) {
		t.Fatalf("bad key: %v", err)
	}
}
