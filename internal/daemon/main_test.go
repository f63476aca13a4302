package daemon

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), code
}

func TestUsageAndExitCodes(t *testing.T) {
	cases := []struct {
		args       []string
		code       int
		wantOut    string
		wantErrOut string
	}{
		{nil, exitUsage, "", "Usage:"},
		{[]string{"--help"}, exitOK, "ccbridge run", ""},
		{[]string{"version"}, exitOK, "ccbridge ", ""},
		{[]string{"frobnicate"}, exitUsage, "", `unknown command "frobnicate"`},
		{[]string{"config"}, exitUsage, "", "usage: ccbridge config check"},
		{[]string{"config", "check", "--help"}, exitOK, "Usage: ccbridge config check", ""},
		{[]string{"run", "--help"}, exitOK, "Usage: ccbridge run", ""},
		{[]string{"run", "--bogus"}, exitUsage, "", "flag provided but not defined"},
		{[]string{"run", "extra"}, exitUsage, "", `unexpected argument "extra"`},
		{[]string{"install-hooks", "extra"}, exitUsage, "", `ccbridge install-hooks: unexpected argument "extra"`},
		{[]string{"service", "status", "extra"}, exitUsage, "", `ccbridge service status: unexpected argument "extra"`},
		{[]string{"setup", "--help"}, exitOK, "Usage: ccbridge setup", ""},
		{[]string{"config", "check", "--config", "/nonexistent/c.toml"}, exitError, "", "read config"},
	}
	for _, c := range cases {
		out, errOut, code := runCLI(t, c.args...)
		if code != c.code || !strings.Contains(out, c.wantOut) || !strings.Contains(errOut, c.wantErrOut) {
			t.Errorf("%q: exit %d (want %d)\nstdout: %s\nstderr: %s", c.args, code, c.code, out, errOut)
		}
	}
}

func TestConfigCheck(t *testing.T) {
	t.Setenv("CCBRIDGE_TOKEN_HOME", "secret-token-1234")
	out, errOut, code := runCLI(t, "config", "check", "--config", filepath.Join("..", "..", "config.example.toml"))
	if code != exitOK || !strings.Contains(out, "config OK") || strings.Contains(out+errOut, "secret-token-1234") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	bad := filepath.Join(t.TempDir(), "bad.toml")
	os.WriteFile(bad, []byte("[claude]\npermission_mode = \"yolo\"\n"), 0o600)
	out, errOut, code = runCLI(t, "config", "check", "--config", bad)
	if code != exitError || !strings.Contains(errOut, `error: claude.permission_mode: "yolo" is not allowed`) || !strings.Contains(errOut, "error: servers:") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	os.WriteFile(bad, []byte("[tmux]\nsokcet = \"x\"\n"), 0o600)
	if _, errOut, code = runCLI(t, "config", "check", "--config", bad); code != exitError || !strings.Contains(errOut, "unknown keys: tmux.sokcet") {
		t.Fatalf("unknown key: exit %d, %s", code, errOut)
	}
}

func TestConfigFromEnvironment(t *testing.T) {
	t.Setenv("CCBRIDGE_CONFIG", "/nonexistent/from-env.toml")
	if _, errOut, code := runCLI(t, "config", "check"); code != exitError || !strings.Contains(errOut, "/nonexistent/from-env.toml") {
		t.Fatalf("exit %d, %s", code, errOut)
	}
}

func TestInstallAndUninstallHooks(t *testing.T) {
	settings := filepath.Join(t.TempDir(), ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(settings), 0o700)
	os.WriteFile(settings, []byte(`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"mine.sh"}]}]},"theme":"dark"}`), 0o644)
	// The hook binaries are found on PATH in this test.
	bin := t.TempDir()
	for _, n := range []string{"ccbridge-hook-stop", "ccbridge-hook-pretool"} {
		os.WriteFile(filepath.Join(bin, n), []byte("#!/bin/sh\n"), 0o755)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	t.Setenv("CCBRIDGE_CONFIG", "/nonexistent")

	out, errOut, code := runCLI(t, "install-hooks", "--settings", settings)
	if code != exitOK || !strings.Contains(out, "registered ccbridge hooks") || !strings.Contains(out, "backup: ") {
		t.Fatalf("install: exit %d\n%s%s", code, out, errOut)
	}
	b, _ := os.ReadFile(settings)
	if !strings.Contains(string(b), "mine.sh") || !strings.Contains(string(b), "ccbridge-hook-stop' --global") || !strings.Contains(string(b), `"theme":"dark"`) {
		t.Fatalf("settings after install:\n%s", b)
	}
	if fi, _ := os.Stat(settings); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode changed to %o", fi.Mode().Perm())
	}
	if out, _, code := runCLI(t, "install-hooks", "--settings", settings); code != exitOK || !strings.Contains(out, "nothing changed") {
		t.Fatalf("second install: %s", out)
	}
	if out, _, code := runCLI(t, "uninstall-hooks", "--settings", settings); code != exitOK || !strings.Contains(out, "removed ccbridge hooks") {
		t.Fatalf("uninstall: %s", out)
	}
	b, _ = os.ReadFile(settings)
	if string(b) != `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"mine.sh"}]}]},"theme":"dark"}` {
		t.Fatalf("settings after uninstall:\n%s", b)
	}
	backups, _ := filepath.Glob(settings + ".ccbridge-backup-*")
	if len(backups) == 0 {
		t.Error("no backup kept")
	}
}
