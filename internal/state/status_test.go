package state

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

func TestCacheWritesARecordGetReads(t *testing.T) {
	d, err := Open(filepath.Join(t.TempDir(), "rt"))
	if err != nil {
		t.Fatal(err)
	}
	c, _ := OpenStatuses(d)
	if err := c.Cache(context.Background(), "sid", Status{Model: "Opus 5.5", ContextPct: 42, HasContext: true}); err != nil {
		t.Fatal(err)
	}
	got, err := c.Get("sid")
	if err != nil || got.Model != "Opus 5.5" || got.ContextPct != 42 {
		t.Fatalf("got %+v, %v", got, err)
	}
	fi, _ := os.Stat(filepath.Join(d.Root(), "statuses", "sid.json"))
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %o", fi.Mode().Perm())
	}
	ents, _ := os.ReadDir(filepath.Join(d.Root(), "statuses"))
	for _, e := range ents {
		if e.Name() != "sid.json" && e.Name() != ".lock" {
			t.Errorf("left behind %s", e.Name())
		}
	}
	if err := c.Cache(context.Background(), "../x", Status{}); err == nil {
		t.Error("a bad key was written")
	}
}
