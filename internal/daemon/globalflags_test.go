package daemon

import (
	"slices"
	"strings"
	"testing"
)

// Every command and subcommand takes the global --config before or after
// it: a table of all of them, run harmlessly with --help, with the flag in
// both places.
func TestGlobalConfigBeforeOrAfterEveryCommand(t *testing.T) {
	t.Setenv("CCBRIDGE_CONFIG", "/nonexistent/env.toml")
	const cfg = "/nonexistent/global.toml"
	commands := [][]string{
		{"setup"}, {"config", "check"}, {"doctor"}, {"run"}, {"mcp"},
		{"service", "install"}, {"service", "uninstall"}, {"service", "status"},
		{"install-hooks"}, {"uninstall-hooks"}, {"version"}, {"help"},
	}
	for _, cmd := range commands {
		for _, args := range [][]string{
			append(append([]string{"--config", cfg}, cmd...), "--help"),
			append(append(slices.Clone(cmd), "--config", cfg), "--help"),
			append(append(slices.Clone(cmd), "--config="+cfg), "--help"),
			append(append([]string{"-config", cfg}, cmd...), "--help"),
		} {
			out, errOut, code := runCLI(t, args...)
			if code != exitOK || errOut != "" || out == "" {
				t.Errorf("%q: exit %d\nstdout: %s\nstderr: %s", args, code, out, errOut)
			}
		}
	}
	// --help before a command is that command's help.
	if out, _, code := runCLI(t, "--help", "doctor"); code != exitOK || !strings.Contains(out, "Usage: ccbridge doctor") {
		t.Errorf("--help doctor: exit %d\n%s", code, out)
	}
	// The config given in either place is the one used.
	for _, args := range [][]string{
		{"uninstall-hooks", "--config", cfg, "--settings", "/nonexistent/dir/settings.json"},
		{"--config", cfg, "uninstall-hooks", "--settings", "/nonexistent/dir/settings.json"},
		{"version", "--config", cfg},
		{"config", "--config", cfg, "check"},
		{"config", "check", "--config", cfg},
		{"service", "status", "--config", cfg},
		{"--config", cfg, "service", "status"},
		{"run", "--config", cfg},
	} {
		out, errOut, code := runCLI(t, args...)
		if code == exitUsage || strings.Contains(errOut, "not defined") {
			t.Errorf("%q: refused, exit %d\nstdout: %s\nstderr: %s", args, code, out, errOut)
		}
		readsConfig := !slices.Contains(args, "uninstall-hooks") && !slices.Contains(args, "version")
		if readsConfig && !strings.Contains(out+errOut, cfg) {
			t.Errorf("%q: does not use %s\nstdout: %s\nstderr: %s", args, cfg, out, errOut)
		}
	}
	if _, errOut, code := runCLI(t, "doctor", "--config"); code != exitUsage || !strings.Contains(errOut, "--config needs a FILE") {
		t.Errorf("doctor --config: exit %d, %s", code, errOut)
	}
}

// The CLI's loose words (first contact 2, §8).
func TestCLILooseWords(t *testing.T) {
	if out, _, _ := runCLI(t, "setup", "--help"); !strings.Contains(out, "how often to check whether the bot has joined") {
		t.Errorf("setup --help, --poll:\n%s", out)
	}
	if _, errOut, code := runCLI(t, "config", "chek"); code != exitUsage || !strings.Contains(errOut, `unknown action "chek"`) {
		t.Errorf("config chek: exit %d\n%s", code, errOut)
	}
	_, errOut, code := runCLI(t, "doctor", "--bogus")
	if code != exitUsage || !strings.Contains(errOut, "flag provided but not defined: --bogus") {
		t.Errorf("doctor --bogus: exit %d\n%s", code, errOut)
	}
	if _, errOut, _ := runCLI(t, "run", "--log-file"); !strings.Contains(errOut, "flag needs an argument: --log-file") {
		t.Errorf("run --log-file: %s", errOut)
	}
	out, errOut, _ := runCLI(t, "service", "status", "--config", "/nonexistent/missing.toml")
	if !strings.Contains(out+errOut, "there is no config at /nonexistent/missing.toml") {
		t.Errorf("service status with a missing config:\nstdout: %s\nstderr: %s", out, errOut)
	}
}
