//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
	"github.com/ccbridge/ccbridge/internal/testutil/testenv"
)

// daemonConfig writes a config for the fake's bots, one project each.
func daemonConfig(t *testing.T, srv *fakediscord.Server, owner fakediscord.User, bots ...*fakediscord.Bot) (path string, env []string) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "[discord]\napi_base = %q\n[tmux]\nsocket = \"ccbt-%d\"\n", srv.URL, os.Getpid())
	for i, bot := range bots {
		envName := fmt.Sprintf("CCBRIDGE_TEST_TOKEN_%d", i)
		env = append(env, envName+"="+bot.Token)
		fmt.Fprintf(&b, "[[servers]]\nname = %q\ntoken_env = %q\nguild_id = %q\nowner_ids = [%q]\n", bot.Name, envName, bot.GuildID, owner.ID)
		fmt.Fprintf(&b, "  [[servers.projects]]\n  name = \"p\"\n  channel_id = %q\n  path = %q\n", bot.ChannelID, t.TempDir())
	}
	path = filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, env
}

func startDaemon(t *testing.T, cfg, runtime string, env []string) (*exec.Cmd, *testenv.SyncBuffer) {
	t.Helper()
	cmd := exec.Command(bins.bridge, "run", "--config", cfg)
	cmd.Env = append(append(os.Environ(), "CCBRIDGE_RUNTIME_DIR="+runtime), env...)
	out := &testenv.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd, out
}

func waitOutput(t testing.TB, out *testenv.SyncBuffer, want string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if strings.Contains(out.String(), want) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("daemon never logged %q; output:\n%s", want, out.String())
}

// TestDaemonConnectsEveryBotOnce runs ccbridge run with two bots against
// the fake Discord: both connect with the Message Content intent, a second
// daemon is refused, SIGTERM stops it cleanly, and no token is logged.
func TestDaemonConnectsEveryBotOnce(t *testing.T) {
	t.Parallel()
	srv := fakediscord.New(t)
	a, b := srv.Main(), srv.NewBot("second")
	cfg, env := daemonConfig(t, srv, srv.NewUser("owner"), a, b)
	runtime := filepath.Join(t.TempDir(), "rt")

	cmd, out := startDaemon(t, cfg, runtime, env)
	waitOutput(t, out, "ccbridge running", 15*time.Second)
	if !srv.Connected(a) || !srv.Connected(b) {
		t.Fatalf("bots connected: %v %v\n%s", srv.Connected(a), srv.Connected(b), out.String())
	}
	const messageContent = 1 << 15
	if st := srv.Stats(); st.Identifies != 2 || st.LastIntents&messageContent == 0 {
		t.Errorf("gateway stats = %+v", st)
	}

	second := exec.Command(bins.bridge, "run", "--config", cfg)
	second.Env = append(append(os.Environ(), "CCBRIDGE_RUNTIME_DIR="+runtime), env...)
	secondOut, err := second.CombinedOutput()
	if err == nil || !strings.Contains(string(secondOut), "another ccbridge daemon is running") {
		t.Errorf("second daemon: %v\n%s", err, secondOut)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("daemon exit after SIGTERM: %v\n%s", err, out.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("daemon did not stop on SIGTERM")
	}
	for _, tok := range []string{a.Token, b.Token} {
		if strings.Contains(out.String(), tok) {
			t.Fatal("a bot token appeared in the daemon's output")
		}
	}
	for _, want := range []string{"server=main", "server=second", "gateway ready", "ccbridge stopping"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, out.String())
		}
	}
}

// TestDaemonRefusesABadConfig shows a config mistake is named before
// anything connects.
func TestDaemonRefusesABadConfig(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "c.toml")
	os.WriteFile(cfg, []byte("[claude]\npermission_mode = \"always\"\n"), 0o600)
	out, err := exec.Command(bins.bridge, "run", "--config", cfg).CombinedOutput()
	if err == nil || !strings.Contains(string(out), `claude.permission_mode: "always" is not allowed; use one of`) {
		t.Fatalf("%v\n%s", err, out)
	}
}
