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
		{[]string{"config", "check", "--config", "/nonexistent/c.toml"}, exitError, "", "no config at /nonexistent/c.toml yet: run `ccbridge setup`"},
		{[]string{"run", "--config", "/nonexistent/c.toml"}, exitError, "", "no config at /nonexistent/c.toml yet: run `ccbridge setup`"},
	}
	for _, c := range cases {
		out, errOut, code := runCLI(t, c.args...)
		// An empty want means nothing at all is written there.
		okOut := strings.Contains(out, c.wantOut) && (c.wantOut != "" || out == "")
		okErr := strings.Contains(errOut, c.wantErrOut) && (c.wantErrOut != "" || errOut == "")
		if code != c.code || !okOut || !okErr {
			t.Errorf("%q: exit %d (want %d)\nstdout: %s\nstderr: %s", c.args, code, c.code, out, errOut)
		}
	}
}

// Help is printed once, to stdout, in one flag style; "help COMMAND" is
// "COMMAND --help"; a command's help offers only its own flags.
func TestHelpOnceAndOneFlagStyle(t *testing.T) {
	for _, cmd := range [][]string{{"run"}, {"setup"}, {"doctor"}, {"mcp"}, {"install-hooks"}, {"uninstall-hooks"}, {"config", "check"}, {"service", "status"}} {
		out, errOut, code := runCLI(t, append(cmd, "--help")...)
		if code != exitOK || errOut != "" || strings.Count(out, "Usage: ccbridge "+cmd[0]) != 1 {
			t.Errorf("%s --help: exit %d\nstdout: %s\nstderr: %s", cmd, code, out, errOut)
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "-") && !strings.HasPrefix(strings.TrimSpace(line), "--") {
				t.Errorf("%s --help: a -flag line: %q", cmd, line)
			}
		}
		help, _, code := runCLI(t, append([]string{"help"}, cmd[0])...)
		if code != exitOK || !strings.Contains(help, "Usage: ccbridge "+cmd[0]) {
			t.Errorf("help %s: exit %d\n%s", cmd[0], code, help)
		}
	}
	if out, _, _ := runCLI(t, "uninstall-hooks", "--help"); strings.Contains(out, "--config") || strings.Contains(out, "prompt_timeout") {
		t.Errorf("uninstall-hooks offers the config:\n%s", out)
	}
	if out, _, code := runCLI(t, "config", "--help"); code != exitOK || !strings.Contains(out, "every problem is listed in one run") {
		t.Errorf("config --help: exit %d\n%s", code, out)
	}
	if out, _, _ := runCLI(t, "--help"); !strings.Contains(out, "service install|uninstall|status [--config FILE]") {
		t.Errorf("top-level usage:\n%s", out)
	}
	// A bad flag: the flag set's message and the usage, once, on stderr.
	if out, errOut, code := runCLI(t, "doctor", "--bogus"); code != exitUsage || out != "" || strings.Count(errOut, "Usage: ccbridge doctor") != 1 {
		t.Errorf("doctor --bogus: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
}

// --config before the command is a global flag, for every command that
// reads a config, services' actions included.
func TestGlobalConfigFlag(t *testing.T) {
	for _, args := range [][]string{
		{"--config", "/nonexistent/g.toml", "config", "check"},
		{"--config=/nonexistent/g.toml", "doctor"},
		{"--config", "/nonexistent/g.toml", "run"},
		{"service", "--config", "/nonexistent/g.toml", "install"},
		{"--config", "/nonexistent/g.toml", "service", "install"},
	} {
		out, errOut, code := runCLI(t, args...)
		if code == exitUsage || !strings.Contains(out+errOut, "/nonexistent/g.toml") {
			t.Errorf("%q: exit %d\nstdout: %s\nstderr: %s", args, code, out, errOut)
		}
	}
	if _, errOut, code := runCLI(t, "--config"); code != exitUsage || !strings.Contains(errOut, "--config needs a FILE") {
		t.Errorf("--config alone: exit %d, %s", code, errOut)
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
	if _, errOut, code = runCLI(t, "config", "check", "--config", bad); code != exitError || !strings.Contains(errOut, "error: tmux.sokcet: unknown key; did you mean socket?") {
		t.Fatalf("unknown key: exit %d, %s", code, errOut)
	}
}

// One run of config check lists every problem: a value that does not
// decode, a misspelt key and what validation finds, all at once.
func TestConfigCheckListsEveryProblemAtOnce(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.toml")
	os.WriteFile(bad, []byte("[claude]\npermision_mode = \"plan\"\nprompt_timeout = \"30 minutes\"\n[[servers]]\nname = \"bad name\"\n"), 0o600)
	_, errOut, code := runCLI(t, "config", "check", "--config", bad)
	for _, want := range []string{"error: claude.permision_mode: unknown key; did you mean permission_mode?",
		`error: claude.prompt_timeout: not a duration like "30m" or "90s": "30 minutes"`,
		`error: servers[bad name].name: "bad name" may hold only letters`} {
		if code != exitError || !strings.Contains(errOut, want) {
			t.Errorf("exit %d, lacks %q:\n%s", code, want, errOut)
		}
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
