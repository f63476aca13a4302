package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A dotfiles setup: ~/.claude/settings.json is a symlink into a repo.
// install-hooks edits the file the link points to and keeps the link.
func TestInstallHooksKeepsASymlinkedSettingsFile(t *testing.T) {
	home := t.TempDir()
	dotfiles := filepath.Join(home, "dotfiles", "claude")
	os.MkdirAll(dotfiles, 0o700)
	target := filepath.Join(dotfiles, "settings.json")
	os.WriteFile(target, []byte(`{"theme":"dark"}`), 0o640)
	settings := filepath.Join(home, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(settings), 0o700)
	if err := os.Symlink("../dotfiles/claude/settings.json", settings); err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	for _, n := range []string{"ccbridge-hook-stop", "ccbridge-hook-pretool"} {
		os.WriteFile(filepath.Join(bin, n), []byte("#!/bin/sh\n"), 0o755)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	t.Setenv("CCBRIDGE_CONFIG", "/nonexistent")

	if out, errOut, code := runCLI(t, "install-hooks", "--settings", settings); code != exitOK {
		t.Fatalf("install: exit %d\n%s%s", code, out, errOut)
	}
	fi, err := os.Lstat(settings)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("settings.json is no longer a symlink: %v, %v", fi.Mode(), err)
	}
	if l, _ := os.Readlink(settings); l != "../dotfiles/claude/settings.json" {
		t.Fatalf("link now points to %q", l)
	}
	b, _ := os.ReadFile(target)
	if !strings.Contains(string(b), "ccbridge-hook-stop") || !strings.Contains(string(b), `{"theme":"dark"`) {
		t.Fatalf("target after install:\n%s", b)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o640 {
		t.Errorf("target mode changed to %o", fi.Mode().Perm())
	}
}
