//go:build e2e

package e2e

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/testutil/claudetest"
	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
	"github.com/ccbridge/ccbridge/internal/testutil/testenv"
)

// setupHome is a throwaway user: HOME, config, runtime and state dirs, and a
// PATH with the real claude and tmux.
type setupHome struct {
	t       *testing.T
	srv     *fakediscord.Server
	bot     *fakediscord.Bot
	owner   fakediscord.User
	home    string
	cfg     string
	env     []string
	runtime string
}

func newSetupHome(t *testing.T) *setupHome {
	claude := claudetest.Binary(t)
	h := &setupHome{t: t, srv: fakediscord.New(t)}
	h.bot = h.srv.Main()
	h.owner = h.srv.NewUser("owner")
	h.srv.SetAppOwner(h.bot, h.owner.ID)
	base := t.TempDir()
	h.home = filepath.Join(base, "home")
	h.runtime = filepath.Join(base, "rt")
	h.cfg = filepath.Join(h.home, ".config", "ccbridge", "config.toml")
	if err := os.MkdirAll(filepath.Dir(h.cfg), 0o700); err != nil {
		t.Fatal(err)
	}
	tmuxPath, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux not installed")
	}
	h.env = append(os.Environ(), "HOME="+h.home, "XDG_CONFIG_HOME=", "CCBRIDGE_CONFIG=", "XDG_STATE_HOME="+filepath.Join(base, "state"),
		"CCBRIDGE_RUNTIME_DIR="+h.runtime, "PATH="+filepath.Dir(claude)+":"+filepath.Dir(tmuxPath)+":/usr/bin:/bin")
	return h
}

// ttySession is a running ccbridge command driven through its stdin.
type ttySession struct {
	t    *testing.T
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *testenv.SyncBuffer
	seen int // output consumed by expect
	done chan error
}

func (h *setupHome) start(args ...string) *ttySession {
	h.t.Helper()
	s := &ttySession{t: h.t, cmd: exec.Command(bins.bridge, args...), out: &testenv.SyncBuffer{}, done: make(chan error, 1)}
	s.cmd.Env = h.env
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	var err error
	if s.in, err = s.cmd.StdinPipe(); err != nil {
		h.t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		h.t.Fatal(err)
	}
	go func() { s.done <- s.cmd.Wait() }()
	h.t.Cleanup(func() { _ = s.cmd.Process.Kill() })
	return s
}

// expect waits for text in the output after what was already matched.
func (s *ttySession) expect(text string) {
	s.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		out := s.out.String()
		if i := strings.Index(out[s.seen:], text); i >= 0 {
			s.seen += i + len(text)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.t.Fatalf("never saw %q; output:\n%s", text, s.out.String())
}

// answer waits for a prompt and types a line.
func (s *ttySession) answer(prompt, line string) {
	s.t.Helper()
	s.expect(prompt)
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatalf("answer %q: %v\n%s", prompt, err, s.out.String())
	}
}

// wait returns the exit code.
func (s *ttySession) wait() int {
	s.t.Helper()
	select {
	case err := <-s.done:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		if err != nil {
			s.t.Fatal(err)
		}
		return 0
	case <-time.After(30 * time.Second):
		s.t.Fatalf("still running; output:\n%s", s.out.String())
		return -1
	}
}

func (h *setupHome) run(args ...string) (string, int) {
	h.t.Helper()
	s := h.start(args...)
	_ = s.in.Close()
	code := s.wait()
	return s.out.String(), code
}

// TestSetupEndToEnd runs `ccbridge setup` with scripted answers against the
// fake Discord: the intent is off until the person enables it, the bot
// joins only after the invite URL was printed, a channel is mapped, the
// owner comes from the application. Then config check passes, the daemon
// starts with the result and logs to its file, `ccbridge doctor` is all
// green; a second setup on that config adds a project and keeps the rest.
func TestSetupEndToEnd(t *testing.T) {
	t.Parallel()
	h := newSetupHome(t)
	// The config's api_base points setup at the fake Discord.
	if err := os.WriteFile(h.cfg, []byte(fmt.Sprintf("[discord]\napi_base = %q\n[tmux]\nsocket = \"ccbe2e-setup-%d\"\n", h.srv.URL, os.Getpid())), 0o644); err != nil {
		t.Fatal(err)
	}
	api := h.srv.AddChannel(h.bot.GuildID, "api")
	web := h.srv.AddChannel(h.bot.GuildID, "web")
	apiDir := filepath.Join(h.home, "src", "api")
	webDir := filepath.Join(h.home, "src", "web")
	for _, d := range []string{apiDir, webDir} {
		_ = os.MkdirAll(d, 0o755)
	}
	h.srv.SetMessageContentIntent(h.bot, false)
	h.srv.LeaveGuild(h.bot)

	s := h.start("setup", "--poll", "50ms")
	s.answer("Bot token", h.bot.Token)
	s.expect("The token works: the bot is main-bot")
	s.answer("A short name for this bot (letters, digits, - and _) [home]", "")
	s.expect("Message Content Intent is OFF")
	h.srv.SetMessageContentIntent(h.bot, true) // the person flips it in the portal
	s.answer("Press Enter when it is enabled", "")
	s.expect("Message Content Intent: enabled.")
	s.expect("https://discord.com/oauth2/authorize?client_id=" + h.bot.UserID + "&permissions=395137109056&scope=bot+applications.commands")
	s.expect("Waiting for the bot to join a server")
	h.srv.JoinGuild(h.bot) // the person opened the invite URL
	s.answer("Your Discord user id (the application's owner is "+h.owner.ID, "")
	s.expect("3. #web")
	s.answer("Channel to map", "2")
	s.answer("Project directory for #api", apiDir)
	s.answer("Channel to map", "")
	s.answer("Channel for the control panel", "")
	s.expect("config OK")
	if code := s.wait(); code != 0 {
		t.Fatalf("setup exit %d:\n%s", code, s.out.String())
	}
	if strings.Contains(s.out.String(), h.bot.Token) {
		t.Error("setup echoed the token")
	}
	for path, want := range map[string]os.FileMode{h.cfg: 0o600, filepath.Join(filepath.Dir(h.cfg), "home.token"): 0o600} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v %v", path, fi, err)
		}
	}
	if out, code := h.run("config", "check", "--config", h.cfg); code != 0 || !strings.Contains(out, "config OK") {
		t.Fatalf("config check after setup: %d\n%s", code, out)
	}

	// The daemon runs with what setup wrote, logging to its file.
	logFile := filepath.Join(h.home, "ccbridge.log")
	d := h.start("run", "--log-file", logFile)
	if !h.srv.WaitConnected(h.bot, 20*time.Second) {
		t.Fatalf("the daemon never connected:\n%s", d.out.String())
	}
	d.expect("ccbridge running")
	if b, _ := os.ReadFile(logFile); !strings.Contains(string(b), "ccbridge running") || strings.Contains(string(b), h.bot.Token) {
		t.Errorf("log file:\n%s", b)
	}

	// Doctor: everything works (the daemon is running).
	out, code := h.run("doctor")
	if code != 0 || !strings.Contains(out, "Everything ccbridge needs works") || !hasLine(out, "ok", "daemon", "running") {
		t.Fatalf("doctor exit %d:\n%s", code, out)
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	d.wait()

	// Re-run: Enter keeps the token, web is added, api stays.
	before, _ := config.Load(h.cfg)
	s = h.start("setup")
	s.answer("Bot token (Enter keeps the current one", "")
	s.answer("Discord user ids allowed to drive sessions (comma separated) ["+h.owner.ID+"]", "")
	s.expect("#api  → project api (" + apiDir + ")")
	s.answer("Channel to map", "3")
	s.answer("Project directory for #web", webDir)
	s.answer("Channel to map", "")
	s.answer("Channel for the control panel", "")
	s.expect("config OK")
	if code := s.wait(); code != 0 {
		t.Fatalf("second setup exit %d:\n%s", code, s.out.String())
	}
	after, err := config.Load(h.cfg)
	if err != nil {
		t.Fatal(err)
	}
	a, b := after.Servers[0], before.Servers[0]
	if after.Tmux.Socket != before.Tmux.Socket || after.Discord.APIBase != h.srv.URL || a.TokenFile != b.TokenFile ||
		len(a.Projects) != 2 || !reflect.DeepEqual(a.Projects[0], b.Projects[0]) || a.Projects[1].ChannelID != web || a.Projects[1].Path != webDir {
		t.Errorf("second setup changed or lost something:\nbefore %+v\nafter  %+v", before, after)
	}
	if _, err := os.Stat(h.cfg + ".bak"); err != nil {
		t.Errorf("no backup: %v", err)
	}
	if a.Projects[0].ChannelID != api {
		t.Errorf("project api maps %s, want %s", a.Projects[0].ChannelID, api)
	}
	if out, code := h.run("config", "check", "--config", h.cfg); code != 0 {
		t.Fatalf("config check after the second setup: %d\n%s", code, out)
	}

	// Doctor fails, with the fix, once a channel loses a permission.
	h.srv.DenyBotInChannel(h.bot, web, fakediscord.PermSendInThreads)
	out, code = h.run("doctor")
	if code != 1 || !strings.Contains(out, "lacks Send Messages in Threads") || !strings.Contains(out, "→ in Discord: #web → Edit Channel → Permissions") {
		t.Errorf("doctor with a missing permission: exit %d\n%s", code, out)
	}
}

// TestSetupGivesUpWhenTheBotNeverJoins: a clear message, exit 1, nothing
// written. The config is found through $CCBRIDGE_CONFIG (were it not, setup
// would talk to discord.com and fail otherwise).
func TestSetupGivesUpWhenTheBotNeverJoins(t *testing.T) {
	t.Parallel()
	h := newSetupHome(t)
	orig := fmt.Sprintf("[discord]\napi_base = %q\n", h.srv.URL)
	h.cfg = filepath.Join(h.home, "elsewhere.toml")
	_ = os.WriteFile(h.cfg, []byte(orig), 0o600)
	h.env = append(h.env, "CCBRIDGE_CONFIG="+h.cfg)
	h.srv.LeaveGuild(h.bot)
	s := h.start("setup", "--wait", "300ms", "--poll", "50ms")
	s.answer("Bot token", h.bot.Token)
	s.answer("A short name", "home")
	if code := s.wait(); code != 1 || !strings.Contains(s.out.String(), "has not joined a server within 300ms") {
		t.Errorf("exit %d:\n%s", code, s.out.String())
	}
	if b, _ := os.ReadFile(h.cfg); string(b) != orig {
		t.Error("config changed")
	}
}

// TestServiceInstallWritesTheUnit runs `ccbridge service install` with a
// recording systemctl on PATH and checks the unit, the environment file
// and their modes in a temp HOME.
func TestServiceInstallWritesTheUnit(t *testing.T) {
	t.Parallel()
	h := newSetupHome(t)
	tok := filepath.Join(filepath.Dir(h.cfg), "x.token")
	_ = os.WriteFile(tok, []byte(h.bot.Token), 0o600)
	proj := filepath.Join(h.home, "p")
	_ = os.MkdirAll(proj, 0o755)
	cfgText := fmt.Sprintf("[discord]\napi_base = %q\n[[servers]]\nname = \"a\"\ntoken_env = \"CCBRIDGE_E2E_SVC_TOKEN\"\nguild_id = %q\nowner_ids = [%q]\n"+
		"  [[servers.projects]]\n  name = \"p\"\n  channel_id = %q\n  path = %q\n", h.srv.URL, h.bot.GuildID, h.owner.ID, h.bot.ChannelID, proj)
	_ = os.WriteFile(h.cfg, []byte(cfgText), 0o600)
	fakeBin := filepath.Join(h.home, "fakebin")
	_ = os.MkdirAll(fakeBin, 0o755)
	record := filepath.Join(h.home, "systemctl.log")
	_ = os.WriteFile(filepath.Join(fakeBin, "systemctl"), []byte("#!/bin/sh\necho \"$@\" >> "+record+"\n"), 0o755)
	for i, e := range h.env {
		if strings.HasPrefix(e, "PATH=") {
			h.env[i] = "PATH=" + fakeBin + ":" + strings.TrimPrefix(e, "PATH=")
		}
	}
	h.env = append(h.env, "CCBRIDGE_E2E_SVC_TOKEN="+h.bot.Token)
	out, code := h.run("service", "install")
	if code != 0 {
		t.Fatalf("service install: exit %d\n%s", code, out)
	}
	unitPath := filepath.Join(h.home, ".config", "systemd", "user", "ccbridge.service")
	unit, err := os.ReadFile(unitPath)
	if err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(filepath.Dir(h.runtime), "state", "ccbridge")
	for _, want := range []string{"ExecStart=" + bins.bridge + " run --config " + h.cfg + " --log-file " + filepath.Join(state, "ccbridge.log"),
		"Restart=on-failure", "KillMode=process", "ExecReload=/bin/kill -HUP $MAINPID", "Environment=CCBRIDGE_CONFIG=" + h.cfg, "EnvironmentFile=-" + filepath.Join(filepath.Dir(h.cfg), "service.env")} {
		if !strings.Contains(string(unit), want) {
			t.Errorf("unit lacks %q:\n%s", want, unit)
		}
	}
	claudeDir := filepath.Dir(claudetest.Binary(t))
	if !strings.Contains(string(unit), claudeDir) || strings.Contains(string(unit), h.bot.Token) {
		t.Errorf("unit PATH lacks claude's directory %s, or holds the token:\n%s", claudeDir, unit)
	}
	envFile := filepath.Join(filepath.Dir(h.cfg), "service.env")
	if b, err := os.ReadFile(envFile); err != nil || !strings.Contains(string(b), "CCBRIDGE_E2E_SVC_TOKEN=\""+h.bot.Token+"\"") {
		t.Errorf("env file: %q %v", b, err)
	}
	if fi, _ := os.Stat(envFile); fi == nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("env file mode: %v", fi)
	}
	calls, _ := os.ReadFile(record)
	// --version: the unit's restart back-off depends on the systemd release.
	if string(calls) != "--version\n--user daemon-reload\n--user enable ccbridge.service\n--user reset-failed ccbridge.service\n--user restart ccbridge.service\n" {
		t.Errorf("systemctl calls:\n%s", calls)
	}
	if _, err := exec.LookPath("systemd-analyze"); err == nil {
		vout, _ := exec.Command("systemd-analyze", "verify", "--man=no", unitPath).CombinedOutput()
		for _, line := range strings.Split(string(vout), "\n") {
			if strings.Contains(line, "ccbridge.service") {
				t.Errorf("systemd-analyze verify: %s", line)
			}
		}
	}
	out, code = h.run("service", "uninstall")
	if code != 0 || !strings.Contains(out, "removed "+unitPath) {
		t.Errorf("uninstall: %d\n%s", code, out)
	}
}

// hasLine reports whether a line of out holds these words, in order.
func hasLine(out string, words ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		if strings.Join(strings.Fields(line), " ") == strings.Join(words, " ") {
			return true
		}
	}
	return false
}
