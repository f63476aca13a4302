//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstallIsIdempotent runs install.sh twice into a throwaway HOME: the
// first run installs the binaries and a 0600 config, the second changes
// nothing and says so.
func TestInstallIsIdempotent(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	run := func() string {
		cmd := exec.Command("./install.sh")
		cmd.Dir = ".."
		cmd.Env = append(os.Environ(), "HOME="+home, "PREFIX="+filepath.Join(home, "prefix"), "XDG_CONFIG_HOME=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("install.sh: %v\n%s", err, out)
		}
		return string(out)
	}
	first := run()
	for _, want := range []string{"installed: " + filepath.Join(home, "prefix", "bin", "ccbridge-hook-stop"), "created:"} {
		if !strings.Contains(first, want) {
			t.Errorf("first run lacks %q:\n%s", want, first)
		}
	}
	cfg := filepath.Join(home, ".config", "ccbridge", "config.toml")
	fi, err := os.Stat(cfg)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("config: %v, %v", fi, err)
	}
	os.WriteFile(cfg, []byte("# mine\n"), 0o600)
	second := run()
	if !strings.Contains(second, "nothing changed") || strings.Contains(second, "installed:") {
		t.Errorf("second run changed something:\n%s", second)
	}
	if b, _ := os.ReadFile(cfg); string(b) != "# mine\n" {
		t.Error("install.sh overwrote an existing config")
	}
	out, err := exec.Command(filepath.Join(home, "prefix", "bin", "ccbridge"), "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "ccbridge ") {
		t.Errorf("installed ccbridge version: %q, %v", out, err)
	}
}
