package state

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// corrupted returns the files the record was moved to.
func corrupted(t *testing.T, c *Collection[counter], key string) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(c.dir, key+".json.corrupt-*"))
	return m
}

// An unreadable record (garbage, or a version this ccbridge does not read)
// is moved aside and logged, and its key works again: Get sees no record,
// Update starts afresh, List leaves it out without failing.
func TestUnreadableRecordIsQuarantined(t *testing.T) {
	c := testCollection(t, filepath.Join(t.TempDir(), "rt"))
	var logs bytes.Buffer
	c.d.SetLogger(slog.New(slog.NewTextHandler(&logs, nil)))
	ctx := context.Background()
	files := map[string]string{"old": `{"version":7,"data":{"n":3}}`, "garbage": `{"version":1,"da`, "badData": `{"version":1,"data":{"n":"x"}}`}
	for k, body := range files {
		os.WriteFile(filepath.Join(c.dir, k+".json"), []byte(body), 0o600)
	}
	c.Update(ctx, "good", func(v *counter) error { v.N = 1; return nil })

	if _, err := c.Get("old"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get of a version-7 record: %v, want ErrNotFound after quarantine", err)
	}
	v, err := c.Update(ctx, "garbage", func(v *counter) error { v.N++; return nil })
	if err != nil || v.N != 1 {
		t.Fatalf("Update of a garbage record = %+v, %v; want a fresh record", v, err)
	}
	all, err := c.List()
	if err != nil || len(all) != 2 || all["good"].N != 1 || all["garbage"].N != 1 {
		t.Fatalf("List = %v, %v; want good and the fresh garbage, no error", all, err)
	}
	for k, body := range files {
		aside := corrupted(t, c, k)
		if len(aside) != 1 {
			t.Fatalf("%s: moved aside to %v, want one file", k, aside)
		}
		if b, _ := os.ReadFile(aside[0]); string(b) != body {
			t.Errorf("%s: quarantined content %q, want the original", k, b)
		}
		if !strings.Contains(logs.String(), k+".json") {
			t.Errorf("%s: quarantine not logged:\n%s", k, logs.String())
		}
	}
	if keys, _ := c.Keys(); strings.Join(keys, ",") != "garbage,good" {
		t.Fatalf("keys = %v", keys)
	}
}

// A reader that saw a bad file must not move away a good record written
// since: the quarantine re-checks under the lock.
func TestQuarantineSparesARewrittenRecord(t *testing.T) {
	c := testCollection(t, filepath.Join(t.TempDir(), "rt"))
	ctx := context.Background()
	c.Update(ctx, "k", func(v *counter) error { v.N = 5; return nil })
	c.quarantine(ctx, filepath.Join(c.dir, "k.json"), false, errCorrupt)
	if v, err := c.Get("k"); err != nil || v.N != 5 || len(corrupted(t, c, "k")) != 0 {
		t.Fatalf("a good record was quarantined: %+v, %v", v, err)
	}
}
