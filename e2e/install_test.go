//go:build e2e

package e2e

import (
	"debug/elf"
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
	// The module cache is warm now: no word of a first build's download.
	if strings.Contains(second, "downloads") {
		t.Errorf("second run announces a download:\n%s", second)
	}
	// Built from source, the binaries are stripped as the archives' are.
	for _, b := range []string{"ccbridge", "ccbridge-hook-stop", "ccbridge-hook-pretool"} {
		f, err := elf.Open(filepath.Join(home, "prefix", "bin", b))
		if err != nil {
			t.Fatal(err)
		}
		if f.Section(".symtab") != nil {
			t.Errorf("%s is not stripped", b)
		}
		f.Close()
	}
	if b, _ := os.ReadFile(cfg); string(b) != "# mine\n" {
		t.Error("install.sh overwrote an existing config")
	}
	out, err := exec.Command(filepath.Join(home, "prefix", "bin", "ccbridge"), "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "ccbridge ") {
		t.Errorf("installed ccbridge version: %q, %v", out, err)
	}
}

// handSettings is a ~/.claude/settings.json as a person formats it: keys
// in their own order, compact arrays, && in a command, a 20-digit integer.
const handSettings = `{
    "model" : "opus",
    "permissions": { "allow": ["Bash(npm test *)", "Read"], "deny": [] },
    "env": {"BUILD": "make && make check", "SEED": 12345678901234567890},
    "hooks": {
        "Stop": [ {"hooks": [{"type": "command", "command": "notify.sh && beep"}]} ]
    },
    "alwaysThinkingEnabled": true
}
`

// install-hooks then uninstall-hooks, through the real binary, give the
// user's settings back byte for byte, keep a backup of each of the newest
// versions they replaced (even within one second), and leave no file where
// there was none (issue 20 item 3).
func TestInstallHooksRoundTripKeepsTheUsersSettings(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	settings := filepath.Join(home, ".claude", "settings.json")
	run := func(args ...string) string {
		cmd := exec.Command(bins.bridge, args...)
		cmd.Env = append(os.Environ(), "HOME="+home, "XDG_STATE_HOME="+filepath.Join(home, "state"), "CCBRIDGE_CONFIG="+filepath.Join(home, "none.toml"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("ccbridge %v: %v\n%s", args, err, out)
		}
		return string(out)
	}

	// No settings file: nothing is left after uninstall.
	run("install-hooks")
	if b, err := os.ReadFile(settings); err != nil || !strings.Contains(string(b), "ccbridge-hook-stop") {
		t.Fatalf("install-hooks wrote no hooks: %v\n%s", err, b)
	}
	run("uninstall-hooks")
	if _, err := os.Stat(settings); !os.IsNotExist(err) {
		b, _ := os.ReadFile(settings)
		t.Fatalf("uninstall-hooks left a file ccbridge created: %v\n%s", err, b)
	}

	// A hand-formatted file comes back byte for byte, twice in a row.
	if err := os.WriteFile(settings, []byte(handSettings), 0o600); err != nil {
		t.Fatal(err)
	}
	var installed []byte
	for range 2 {
		run("install-hooks")
		installed, _ = os.ReadFile(settings)
		if strings.Contains(string(installed), `\u0026`) || !strings.Contains(string(installed), "12345678901234567890") {
			t.Fatalf("install-hooks rewrote the user's values:\n%s", installed)
		}
		run("uninstall-hooks")
		if b, _ := os.ReadFile(settings); string(b) != handSettings {
			t.Fatalf("uninstall-hooks did not give the file back:\n%s\nwant\n%s", b, handSettings)
		}
	}
	// Four runs that changed the file, most within one second: the newest
	// three backups are kept (installed, original, installed), not a pile.
	backups, _ := filepath.Glob(settings + ".ccbridge-backup-*")
	originals, withHooks := 0, 0
	for _, p := range backups {
		switch b, _ := os.ReadFile(p); string(b) {
		case handSettings:
			originals++
		case string(installed):
			withHooks++
		}
	}
	if len(backups) != 3 || originals != 1 || withHooks != 2 {
		t.Errorf("backups: %d files, %d of the original, %d with the hooks: %v", len(backups), originals, withHooks, backups)
	}
}
