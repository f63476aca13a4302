package state

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

func TestPruneKeepsTheNewestMax(t *testing.T) {
	c := testCollection(t, filepath.Join(t.TempDir(), "rt"))
	ctx := context.Background()
	for i := range 5 {
		k := "k" + strconv.Itoa(i)
		c.Update(ctx, k, func(v *counter) error { v.N = i; return nil })
		at := time.Now().Add(time.Duration(i-10) * time.Minute)
		os.Chtimes(filepath.Join(c.dir, k+".json"), at, at)
	}
	os.WriteFile(filepath.Join(c.dir, "bad.json.corrupt-1"), nil, 0o600)
	old := time.Now().Add(-48 * time.Hour)
	os.Chtimes(filepath.Join(c.dir, "bad.json.corrupt-1"), old, old)
	n, err := c.Prune(ctx, time.Now().Add(-24*time.Hour), 2)
	if err != nil || n != 4 {
		t.Fatalf("Prune = %d, %v; want 4 removed", n, err)
	}
	if keys, _ := c.Keys(); len(keys) != 2 || keys[0] != "k3" || keys[1] != "k4" {
		t.Fatalf("kept %v, want the newest two", keys)
	}
}

func TestPruneSessionFilesBySize(t *testing.T) {
	d, err := Open(filepath.Join(t.TempDir(), "rt"))
	if err != nil {
		t.Fatal(err)
	}
	up, _ := d.Uploads("s")
	for i := range 4 {
		p := filepath.Join(up, strconv.Itoa(i))
		os.WriteFile(p, make([]byte, 100), 0o600)
		at := time.Now().Add(time.Duration(i-10) * time.Minute)
		os.Chtimes(p, at, at)
	}
	n, err := d.PruneSessionFiles(time.Now().Add(-time.Hour), 250, nil)
	if err != nil || n != 2 {
		t.Fatalf("PruneSessionFiles = %d, %v; want the 2 oldest removed", n, err)
	}
	for i, want := range []bool{false, false, true, true} {
		if _, err := os.Stat(filepath.Join(up, strconv.Itoa(i))); (err == nil) != want {
			t.Errorf("file %d: exists = %v, want %v", i, err == nil, want)
		}
	}
}

func TestRotateLog(t *testing.T) {
	d, _ := Open(filepath.Join(t.TempDir(), "rt"))
	f, _ := d.OpenLog("x.log")
	f.WriteString("0123456789")
	f.Close()
	if rotated, err := d.RotateLog("x.log", 10); rotated || err != nil {
		t.Fatalf("rotated a log at the limit: %v, %v", rotated, err)
	}
	f, _ = d.OpenLog("x.log")
	f.WriteString("!")
	f.Close()
	if rotated, err := d.RotateLog("x.log", 10); !rotated || err != nil {
		t.Fatalf("did not rotate a log past the limit: %v, %v", rotated, err)
	}
	if b, err := os.ReadFile(filepath.Join(d.Root(), "logs", "x.log.1")); err != nil || len(b) != 11 {
		t.Fatalf("old log = %q, %v", b, err)
	}
}
