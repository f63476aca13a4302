package daemon

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
)

// daemonEnv gives `ccbridge run` a machine of its own: runtime and state
// directories, and hook binaries on PATH.
func daemonEnv(t *testing.T) string {
	dir := t.TempDir()
	t.Setenv("CCBRIDGE_RUNTIME_DIR", filepath.Join(dir, "rt"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	bin := filepath.Join(dir, "bin")
	_ = os.MkdirAll(bin, 0o755)
	for _, n := range []string{"ccbridge-hook-stop", "ccbridge-hook-pretool"} {
		_ = os.WriteFile(filepath.Join(bin, n), []byte("#!/bin/sh\n"), 0o755)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	return dir
}

func runConfig(t *testing.T, dir, apiBase, token, guild string) string {
	tok := filepath.Join(dir, "home.token")
	_ = os.WriteFile(tok, []byte(token), 0o600)
	proj := filepath.Join(dir, "proj")
	_ = os.MkdirAll(proj, 0o755)
	cfg := filepath.Join(dir, "config.toml")
	_ = os.WriteFile(cfg, []byte(fmt.Sprintf("[discord]\napi_base = %q\n[tmux]\nsocket = \"ccbt-%d\"\n[[servers]]\nname = \"home\"\ntoken_file = %q\nguild_id = %q\n"+
		"owner_ids = [\"100000000000000002\"]\n  [[servers.projects]]\n  name = \"p\"\n  channel_id = \"100000000000000003\"\n  path = %q\n",
		apiBase, os.Getpid(), tok, guild, proj)), 0o600)
	return cfg
}

// A refused token: run says what setup and doctor say, not Discord's raw
// body.
func TestRunWithARefusedTokenSaysWhatToDo(t *testing.T) {
	dir := daemonEnv(t)
	srv := fakediscord.New(t)
	cfg := runConfig(t, dir, srv.URL, "not-a-token", srv.Main().GuildID)
	_, errOut, code := runCLI(t, "run", "--config", cfg)
	if code != exitError || !strings.Contains(errOut, "server home: Discord refused the bot token: copy a fresh token") || !strings.Contains(errOut, "Reset Token") ||
		!strings.Contains(errOut, "ccbridge setup") || strings.Contains(errOut, `"message"`) {
		t.Errorf("exit %d:\n%s", code, errOut)
	}
}

// An api_base nothing listens on: the error names it, not discord.com. A
// failure that passes (no network) keeps the daemon up, retrying: exiting
// would only spend systemd's start limit.
func TestRunNamesTheAPIBase(t *testing.T) {
	defer func(f, c time.Duration) { connectRetryFirst, connectRetryCap = f, c }(connectRetryFirst, connectRetryCap)
	connectRetryFirst, connectRetryCap = 20*time.Millisecond, 100*time.Millisecond
	dir := daemonEnv(t)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	base := "http://" + ln.Addr().String()
	ln.Close()
	cfg := runConfig(t, dir, base, "tok", "100000000000000001")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb syncBuffer
	code := make(chan int, 1)
	go func() { code <- run(ctx, []string{"run", "--config", cfg}, &out, &errb) }()
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(errb.String(), "ccbridge running"); time.Sleep(20 * time.Millisecond) {
		select {
		case c := <-code:
			t.Fatalf("run ended (exit %d) when Discord could not be reached:\n%s", c, errb.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("not running:\n%s", errb.String())
		}
	}
	for deadline := time.Now().Add(20 * time.Second); strings.Count(errb.String(), "a bot could not connect") < 2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not retried:\n%s", errb.String())
		}
	}
	cancel()
	if c := <-code; c != exitOK {
		t.Errorf("exit %d", c)
	}
	errOut := errb.String()
	if !strings.Contains(errOut, `\"`+base+`/api/v9/gateway`) || strings.Contains(errOut, "discord.com") {
		t.Errorf("the error does not name the api_base:\n%s", errOut)
	}
	if !strings.Contains(errOut, "connecting to Discord") {
		t.Errorf("no word of what is checked before the wait:\n%s", errOut)
	}
}
