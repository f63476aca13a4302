package state

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A hook without XDG_RUNTIME_DIR chooses between the runtime directories
// by the freshness of their routes: a directory another user planted,
// however fresh, is never the one chosen (review 3, finding 11).
func TestReview3HookPicksAPlantedRuntimeDir(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to give the planted directory another owner")
	}
	base := t.TempDir()
	tmp, run := filepath.Join(base, "tmp-ccbridge"), filepath.Join(base, "run-ccbridge")
	for _, d := range []string{tmp, run} {
		s, err := OpenStore(d)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Routes.Update(context.Background(), RoutesKey, func(*Routes) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	next := time.Now().Add(365 * 24 * time.Hour)
	os.Chtimes(filepath.Join(tmp, "routes", RoutesKey+".json"), next, next)
	if err := filepath.Walk(tmp, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, 65534, 65534)
	}); err != nil {
		t.Fatal(err)
	}
	got := freshestRuntime([]string{tmp, run})
	if got != run {
		_, err := Open(got)
		t.Fatalf("picked %s; Open: %v", filepath.Base(got), err)
	}
	// Shared with others (0755) or a symlink: refused the same way.
	os.Chown(tmp, 0, 0)
	os.Chmod(tmp, 0o755)
	if got := freshestRuntime([]string{tmp, run}); got != run {
		t.Fatalf("a 0755 directory was picked: %s", got)
	}
	link := filepath.Join(base, "link")
	os.Symlink(run, link)
	os.Chtimes(filepath.Join(run, "routes", RoutesKey+".json"), next, next)
	if got := freshestRuntime([]string{link, tmp}); got != link {
		// Neither is usable: the first, which Open refuses.
		t.Fatalf("with no usable directory: %s", got)
	}
	if got := freshestRuntime([]string{link, run}); got != run {
		t.Fatalf("a symlink was picked: %s", got)
	}
}
