package panel

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
)

// The package's init compiles nothing: the patterns that read other
// machines' panels and channel lists are compiled by the first one read
// (two {0,63}s made init allocate ~90 KB in every daemon, kept for a fleet
// it may not have; BenchmarkDaemonIdleRSS).
func TestInitAllocatesLittle(t *testing.T) {
	if os.Getenv("PANEL_INIT_PROBE") != "" {
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestInitAllocatesLittle$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1", "PANEL_INIT_PROBE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	m := regexp.MustCompile(`(?m)^init github\.com/ccbridge/ccbridge/internal/panel @\S+ ms, \S+ ms clock, (\d+) bytes`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no init line for internal/panel in:\n%s", out)
	}
	n, _ := strconv.Atoi(string(m[1]))
	if n > 16<<10 {
		t.Fatalf("internal/panel's init allocates %d bytes, want at most 16 KiB", n)
	}
}
