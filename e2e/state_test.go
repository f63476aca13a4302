//go:build e2e

package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
)

// The runtime dir is removed under a running daemon and created again (by
// a tmp cleaner, then anyone): the daemon stops at once, non-zero, and
// says why, instead of starting sessions with whatever settings the new
// dir holds.
func TestDaemonStopsWhenItsRuntimeDirIsReplaced(t *testing.T) {
	t.Parallel()
	srv := fakediscord.New(t)
	cfg, env := daemonConfig(t, srv, srv.NewUser("owner"), srv.Main())
	runtime := filepath.Join(t.TempDir(), "rt")
	cmd, out := startDaemon(t, cfg, runtime, env)
	waitOutput(t, out, "ccbridge running", 15*time.Second)

	if err := os.RemoveAll(runtime); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(runtime, 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(runtime, "claude-settings.json"), []byte(`{"hooks":{}}`), 0o600)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() == 0 {
			t.Fatalf("daemon exit = %v, want a non-zero status\n%s", err, out.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("the daemon kept running on a replaced runtime dir\n%s", out.String())
	}
	for _, want := range []string{"runtime directory is no longer ours", "unsafe runtime directory"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// Deleting daemon.lock does not let a second daemon in: the lock is on the
// directory itself.
func TestSecondDaemonRefusedWithoutItsLockFile(t *testing.T) {
	t.Parallel()
	srv := fakediscord.New(t)
	cfg, env := daemonConfig(t, srv, srv.NewUser("owner"), srv.Main())
	runtime := filepath.Join(t.TempDir(), "rt")
	_, out := startDaemon(t, cfg, runtime, env)
	waitOutput(t, out, "ccbridge running", 15*time.Second)
	if err := os.Remove(filepath.Join(runtime, "daemon.lock")); err != nil {
		t.Fatal(err)
	}
	second := exec.Command(bins.bridge, "run", "--config", cfg)
	second.Env = append(append(os.Environ(), "CCBRIDGE_RUNTIME_DIR="+runtime), env...)
	done := make(chan []byte, 1)
	go func() { b, _ := second.CombinedOutput(); done <- b }()
	select {
	case b := <-done:
		if !strings.Contains(string(b), "another ccbridge daemon is running") {
			t.Fatalf("second daemon: %s", b)
		}
	case <-time.After(15 * time.Second):
		second.Process.Kill()
		t.Fatal("a second daemon started after daemon.lock was deleted")
	}
}
