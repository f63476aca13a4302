package opened

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
)

type rootFixture struct{ root string }

// newRoot is an open root (symlinks resolved) holding api/internal, web,
// a hidden folder, a file, a symlink out of the root and one into api/.
func newRoot(t *testing.T) rootFixture {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"api/internal", "web", ".hidden"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{"escape": t.TempDir(), "api-link": filepath.Join(root, "api")}
	for name, to := range links {
		if err := os.Symlink(to, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "notes.txt"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return rootFixture{root}
}

func TestResolveOpenPath(t *testing.T) {
	f := newRoot(t)
	roots := []string{f.root}
	outside := filepath.Dir(f.root)
	for _, c := range []struct {
		in, want, err string
	}{
		{in: "api", want: filepath.Join(f.root, "api")},
		{in: filepath.Join(f.root, "api", "internal"), want: filepath.Join(f.root, "api", "internal")},
		{in: " web ", want: filepath.Join(f.root, "web")},
		{in: "api-link", want: filepath.Join(f.root, "api")}, // a symlink within the roots
		{in: f.root, want: f.root},
		{in: "api/../..", err: `goes up a folder with ".."`},
		{in: f.root + "/api/..", err: `goes up a folder with ".."`},
		{in: "..", err: `goes up a folder with ".."`},
		{in: "escape", err: "leads (through a symlink) to"},
		{in: "escape/", err: "outside the folders /open may open"},
		{in: "notes.txt", err: "is a file, not a folder"},
		{in: "gone", err: filepath.Join(f.root, "gone") + " does not exist"},
		{in: outside, err: "is not under the folders /open may open"},
		// Whether a path outside the roots exists is never told.
		{in: filepath.Join(outside, "nothing-here"), err: "is not under the folders /open may open"},
		{in: "/etc", err: "is not under the folders /open may open"},
		{in: "", err: "give a folder under " + f.root},
	} {
		got, err := Resolve(roots, c.in)
		switch {
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("%q: got %q, %v; want %q", c.in, got, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: got %q, %v; want an error with %q", c.in, got, err, c.err)
		}
	}
}

func TestSuggestFoldersUnderTheRoots(t *testing.T) {
	f := newRoot(t)
	names := func(cs []chat.Choice) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Value)
			if c.Name == "" || len(c.Name) > 100 || len(c.Value) > 100 {
				t.Errorf("a choice Discord refuses: %+v", c)
			}
		}
		return out
	}
	all := names(Suggest([]string{f.root}, "", time.Now().Add(time.Second)))
	want := []string{f.root + "/api", f.root + "/web", f.root + "/api/internal"}
	if !slices.Equal(all, want) {
		t.Fatalf("suggestions = %q, want %q (no hidden folder, file or symlink)", all, want)
	}
	if got := names(Suggest([]string{f.root}, "INT", time.Now().Add(time.Second))); !slices.Equal(got, []string{f.root + "/api/internal"}) {
		t.Errorf("INT: %q", got)
	}
	if got := names(Suggest([]string{f.root}, f.root+"/ap", time.Now().Add(time.Second))); len(got) == 0 || got[0] != f.root+"/api" {
		t.Errorf("a path typed from the root: %q", got)
	}
	if got := Suggest([]string{f.root + "/missing"}, "", time.Now().Add(time.Second)); len(got) != 0 {
		t.Errorf("a missing root suggested %v", got)
	}
	for i := range 40 {
		if err := os.Mkdir(filepath.Join(f.root, fmt.Sprintf("many%02d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if got := Suggest([]string{f.root}, "many", time.Now().Add(time.Second)); len(got) != chat.MaxChoices || got[0].Value != f.root+"/many00" {
		t.Errorf("got %d suggestions starting %v; want Discord's %d, in order", len(got), got[:1], chat.MaxChoices)
	}
}

func BenchmarkSuggestFolders5000(b *testing.B) {
	root := b.TempDir()
	n := 0
	for i := 0; n < 5000; i++ {
		for j := 0; j < 20 && n < 5000; j++ {
			for k := 0; k < 10 && n < 5000; k++ {
				if err := os.MkdirAll(filepath.Join(root, fmt.Sprintf("org%02d/repo%02d/pkg%d", i, j, k)), 0o755); err != nil {
					b.Fatal(err)
				}
				n++
			}
		}
	}
	var slowest time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		got := Suggest([]string{root}, "pkg7", start.Add(SuggestBudget))
		if d := time.Since(start); d > slowest {
			slowest = d
		}
		if len(got) != chat.MaxChoices {
			b.Fatalf("%d suggestions", len(got))
		}
	}
	b.ReportMetric(float64(slowest.Milliseconds()), "slowest-ms")
	if slowest > SuggestBudget {
		b.Fatalf("slowest answer took %s; Discord waits 3s", slowest)
	}
}
