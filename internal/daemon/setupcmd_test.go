package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/state"
)

func TestSetupDoctorServiceUsage(t *testing.T) {
	cases := []struct {
		args       []string
		code       int
		wantOut    string
		wantErrOut string
	}{
		{[]string{"--help"}, exitOK, "ccbridge setup", ""},
		{[]string{"--help"}, exitOK, "ccbridge service install|uninstall|status", ""},
		{[]string{"setup", "--help"}, exitOK, "Usage: ccbridge setup", ""},
		{[]string{"setup", "--help"}, exitOK, "set up a Telegram bot", ""},
		{[]string{"setup", "extra"}, exitUsage, "", `unexpected argument "extra"`},
		{[]string{"doctor", "--help"}, exitOK, "Usage: ccbridge doctor", ""},
		{[]string{"doctor", "--bogus"}, exitUsage, "", "flag provided but not defined"},
		{[]string{"service"}, exitUsage, "", "Usage: ccbridge service"},
		{[]string{"service", "--help"}, exitOK, "Usage: ccbridge service", ""},
		{[]string{"service", "install", "--help"}, exitOK, "Usage: ccbridge service", ""},
		{[]string{"service", "restart"}, exitUsage, "", `unknown action "restart"`},
		{[]string{"service", "install", "--config", "/nonexistent/c.toml"}, exitError, "", "fix the config first"},
		{[]string{"run", "--help"}, exitOK, "--log-file", ""},
		{[]string{"run", "--help"}, exitOK, "--debug", ""},
	}
	for _, c := range cases {
		out, errOut, code := runCLI(t, c.args...)
		if code != c.code || !strings.Contains(out, c.wantOut) || !strings.Contains(errOut, c.wantErrOut) {
			t.Errorf("%q: exit %d (want %d)\nstdout: %s\nstderr: %s", c.args, code, c.code, out, errOut)
		}
	}
}

// With --log-file everything the daemon says goes to the file too, even
// why it would not start.
func TestRunLogsToTheLogFile(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.toml")
	_ = os.WriteFile(cfg, []byte("[discord]\napi_base = \"ftp://x\"\n"), 0o600)
	logPath := filepath.Join(dir, "state", "ccbridge.log")
	_, errOut, code := runCLI(t, "run", "--config", cfg, "--log-file", logPath, "--debug")
	if code != exitError {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	b, err := os.ReadFile(logPath)
	if err != nil || !strings.Contains(string(b), "discord.api_base") || !strings.Contains(errOut, "discord.api_base") {
		t.Errorf("log file %q (%v); stderr %q", b, err, errOut)
	}
	if fi, err := os.Stat(logPath); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("log file mode: %v %v", fi, err)
	}
}

func TestDebugLevel(t *testing.T) {
	var b strings.Builder
	newLogger(&b, false).Debug("hidden")
	newLogger(&b, true).Debug("shown")
	if strings.Contains(b.String(), "hidden") || !strings.Contains(b.String(), "shown") {
		t.Errorf("log: %q", b.String())
	}
}

// setup's last words depend on whether a daemon holds the runtime
// directory's lock.
func TestDaemonRunningProbe(t *testing.T) {
	root := filepath.Join(t.TempDir(), "rt")
	t.Setenv(state.EnvRuntimeDir, root)
	if daemonRunning() {
		t.Fatal("running, with no runtime dir")
	}
	store, err := state.OpenStore(root)
	if err != nil {
		t.Fatal(err)
	}
	if daemonRunning() {
		t.Fatal("running, with no daemon")
	}
	unlock, err := store.Dir.LockDaemon()
	if err != nil {
		t.Fatal(err)
	}
	if !daemonRunning() {
		t.Fatal("not running, while a daemon holds the lock")
	}
	if err := unlock(); err != nil {
		t.Fatal(err)
	}
	if daemonRunning() {
		t.Fatal("still running once the daemon let go")
	}
}
