package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func hookBinsOnPath(t *testing.T) {
	t.Helper()
	bin := t.TempDir()
	for _, n := range []string{"ccbridge-hook-stop", "ccbridge-hook-pretool"} {
		os.WriteFile(filepath.Join(bin, n), []byte("#!/bin/sh\n"), 0o755)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	t.Setenv("CCBRIDGE_CONFIG", "/nonexistent")
	t.Setenv("XDG_STATE_HOME", t.TempDir())
}

// install-hooks then uninstall-hooks give back the reviewer's odd file
// byte for byte, its empty lists and hooks object included; the backups
// do not pile up (first contact 2, §11).
func TestHooksRoundTripKeepsEmptyListsAndPrunesBackups(t *testing.T) {
	hookBinsOnPath(t)
	settings := filepath.Join(t.TempDir(), "settings.json")
	const odd = `  {  "a": [ ] , "b" : { } , "hooks" : { "Notification" : [ ] }  }`
	os.WriteFile(settings, []byte(odd), 0o600)
	for range 4 {
		if out, errOut, code := runCLI(t, "install-hooks", "--settings", settings); code != exitOK {
			t.Fatalf("install: exit %d\n%s%s", code, out, errOut)
		}
		if out, errOut, code := runCLI(t, "uninstall-hooks", "--settings", settings); code != exitOK {
			t.Fatalf("uninstall: exit %d\n%s%s", code, out, errOut)
		}
		if b, _ := os.ReadFile(settings); string(b) != odd {
			t.Fatalf("after a round trip:\n%s\nwant\n%s", b, odd)
		}
	}
	// Uninstalled: no record of the file's shape is left behind.
	if _, err := os.Stat(shapesFile()); !os.IsNotExist(err) {
		t.Errorf("shapes record left: %v", err)
	}
	backups, _ := filepath.Glob(settings + ".ccbridge-backup-*")
	if len(backups) != keepBackups {
		t.Errorf("%d backups kept, want %d: %v", len(backups), keepBackups, backups)
	}
	// Another backup-looking file of the user's is not ccbridge's to prune.
	mine := settings + ".ccbridge-backup-mine"
	os.WriteFile(mine, []byte("{}"), 0o600)
	runCLI(t, "install-hooks", "--settings", settings)
	if _, err := os.Stat(mine); err != nil {
		t.Errorf("the user's file was pruned: %v", err)
	}
}

// A settings file with a comment is refused naming the line, the column
// and the cause.
func TestHooksRefuseACommentClearly(t *testing.T) {
	hookBinsOnPath(t)
	settings := filepath.Join(t.TempDir(), "settings.json")
	os.WriteFile(settings, []byte("{\n  // mine\n  \"model\": \"opus\"\n}\n"), 0o600)
	_, errOut, code := runCLI(t, "install-hooks", "--settings", settings)
	if code != exitError || !strings.Contains(errOut, "line 2, column 3: comments are not JSON") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}
