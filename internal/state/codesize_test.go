package state

import (
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCollectionCodePerRecordType guards the binary's size, and so the
// daemon's idle RSS (the kernel maps nearly all the code start-up runs
// through; BENCHMARKS.md): each record type may add only a thin typed
// wrapper, the work being done once by the untyped core. It builds a
// program using every method of one record type, then of eleven, and
// compares their code. A typed core costs ~29 KiB per type.
func TestCollectionCodePerRecordType(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two programs")
	}
	const more = 10
	one, many := probeText(t, 1), probeText(t, 1+more)
	per := (many - one) / more
	t.Logf("code per record type: %d bytes (%d → %d)", per, one, many)
	if per > 8<<10 {
		t.Fatalf("each record type adds %d bytes of code, want at most 8 KiB: keep Collection[T]'s methods thin wrappers over collection", per)
	}
}

// probeText builds a program with n record types, each used through every
// method of Collection, and returns the size of its .text.
func probeText(t *testing.T, n int) int {
	t.Helper()
	var src strings.Builder
	src.WriteString("package main\n\nimport (\n\t\"context\"\n\t\"time\"\n\n\t\"github.com/ccbridge/ccbridge/internal/state\"\n)\n\n")
	for i := range n {
		fmt.Fprintf(&src, "type rec%d struct {\n\tA%d string\n\tB []int\n\tC map[string]bool\n\tD time.Time\n}\n\n", i, i)
	}
	src.WriteString("func main() {\n\tctx := context.Background()\n\td, _ := state.Open(\"/nonexistent\")\n")
	for i := range n {
		fmt.Fprintf(&src, `	{
		c, _ := state.NewCollectionForTest[rec%[1]d](d, "r%[1]d")
		c.Get("k")
		c.Update(ctx, "k", func(*rec%[1]d) error { return nil })
		c.UpdateUnsynced(ctx, "k", func(*rec%[1]d) error { return nil })
		c.Create(ctx, "k", rec%[1]d{})
		c.CreateUnsynced(ctx, "k", rec%[1]d{})
		c.Cache(ctx, "k", rec%[1]d{})
		c.List()
		c.Keys()
		c.Delete(ctx, "k")
		c.Sync("k")
		c.Prune(ctx, time.Now(), 0)
		c.Watch(ctx)
	}
`, i)
	}
	src.WriteString("}\n")
	dir := t.TempDir()
	mainGo := filepath.Join(dir, "main.go")
	if err := os.WriteFile(mainGo, []byte(src.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	// The program is overlaid inside the module, so it may import internal
	// packages, and NewCollectionForTest is overlaid into this package.
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	helper := filepath.Join(dir, "probe.go")
	if err := os.WriteFile(helper, []byte("package state\n\n// NewCollectionForTest opens a collection of any record type.\nfunc NewCollectionForTest[T any](d *Dir, name string) (*Collection[T], error) {\n\treturn newCollection[T](d, name, 1)\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	overlay, _ := json.Marshal(map[string]map[string]string{"Replace": {
		filepath.Join(wd, "zz_probe", "main.go"): mainGo,
		filepath.Join(wd, "zz_probe_helper.go"):  helper,
	}})
	overlayFile := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(overlayFile, overlay, 0o600); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "probe")
	cmd := exec.Command("go", "build", "-overlay", overlayFile, "-trimpath", "-ldflags=-s -w", "-o", bin, "./zz_probe")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the probe: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	text := f.Section(".text")
	if text == nil {
		t.Fatal("the probe has no .text")
	}
	return int(text.Size)
}
