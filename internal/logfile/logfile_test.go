package logfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRotatesBySizeAndKeepsTwo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "logs", "ccbridge.log")
	l, err := Open(path, 100, 2)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Repeat("x", 39) + "\n" // 40 bytes: two per file
	for i := range 9 {
		if _, err := fmt.Fprintf(l, "%d%s", i, line[1:]); err != nil {
			t.Fatal(err)
		}
	}
	_ = l.Close()
	read := func(p string) string { b, _ := os.ReadFile(p); return string(b) }
	// Lines 0-8, two per file: the current file starts at 8, .1 at 6, .2 at 4.
	cur, one, two := read(path), read(path+".1"), read(path+".2")
	if !strings.HasPrefix(cur, "8") || !strings.HasPrefix(one, "6") || !strings.HasPrefix(two, "4") {
		t.Errorf("files: %q | %q | %q", cur, one, two)
	}
	if _, err := os.Stat(path + ".3"); err == nil {
		t.Error("kept more than two old files")
	}
	for _, p := range []string{path, path + ".1", path + ".2"} {
		fi, err := os.Stat(p)
		if err != nil || fi.Size() > 100 || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v", p, fi, err)
		}
	}
	if fi, _ := os.Stat(filepath.Dir(path)); fi.Mode().Perm() != 0o700 {
		t.Errorf("dir mode %o", fi.Mode().Perm())
	}
}

func TestAppendsToAnExistingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l.log")
	_ = os.WriteFile(path, []byte(strings.Repeat("a", 90)), 0o600)
	l, err := Open(path, 100, 1)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = l.Write([]byte("0123456789abc"))
	_ = l.Close()
	if b, _ := os.ReadFile(path); string(b) != "0123456789abc" {
		t.Errorf("current %q: the old size was not counted", b)
	}
	if b, _ := os.ReadFile(path + ".1"); len(b) != 90 {
		t.Errorf("old %d bytes", len(b))
	}
}
