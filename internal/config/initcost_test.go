package config

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
)

// The package's init builds only what every daemon uses: the patterns of
// the keys a config may not have (a web host name, policy rules, Telegram
// chat ids) and of error messages are compiled when first needed. hostName
// alone (a DNS name, {0,61} twice) allocated ~110 KB at init and kept ~50 KB
// in every daemon (BenchmarkDaemonIdleRSS).
func TestInitAllocatesLittle(t *testing.T) {
	if os.Getenv("CONFIG_INIT_PROBE") != "" {
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestInitAllocatesLittle$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1", "CONFIG_INIT_PROBE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	m := regexp.MustCompile(`(?m)^init github\.com/ccbridge/ccbridge/internal/config @\S+ ms, \S+ ms clock, (\d+) bytes`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no init line for internal/config in:\n%s", out)
	}
	n, _ := strconv.Atoi(string(m[1]))
	if n > 96<<10 {
		t.Fatalf("internal/config's init allocates %d bytes, want at most 96 KiB", n)
	}
}
