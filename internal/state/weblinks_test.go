package state

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestWebLinksKeyCreatedOnceAndPrivate: the web view's signing key is made
// once, kept 0600, and survives a reopen; Revoke bumps the generation
// durably and keeps the key.
func TestWebLinksKeyCreatedOnceAndPrivate(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "durable")
	d, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := OpenWebLinks(d)
	if err != nil {
		t.Fatal(err)
	}
	first, err := s.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Key) != WebKeySize {
		t.Fatalf("key is %d bytes, want %d", len(first.Key), WebKeySize)
	}
	again, err := s.Load(ctx)
	if err != nil || string(again.Key) != string(first.Key) || again.Generation != first.Generation {
		t.Fatalf("second load = %+v, %v; want the same key and generation", again, err)
	}
	ents, _ := os.ReadDir(filepath.Join(dir, "web"))
	for _, e := range ents {
		fi, err := os.Stat(filepath.Join(dir, "web", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().IsRegular() && fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", e.Name(), fi.Mode().Perm())
		}
	}
	revoked, err := s.Revoke(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if revoked.Generation != first.Generation+1 || string(revoked.Key) != string(first.Key) {
		t.Fatalf("after revoke = gen %d, want %d and the same key", revoked.Generation, first.Generation+1)
	}
	d2, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := OpenWebLinks(d2)
	if err != nil {
		t.Fatal(err)
	}
	reopened, err := s2.Load(ctx)
	if err != nil || reopened.Generation != revoked.Generation || string(reopened.Key) != string(first.Key) {
		t.Fatalf("reopened = %+v, %v; want the revoked generation and the first key", reopened, err)
	}
}
