package doctor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/claudehook"
	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/execx"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
)

// world is a machine on which everything works; each test breaks one thing.
type world struct {
	t          *testing.T
	srv        *fakediscord.Server
	bot        *fakediscord.Bot
	api        string // the project channel
	dir        string
	cfg        string
	tmuxV      string
	claudeV    string
	noTmux     bool
	noClaude   bool
	noHookBins bool
	settings   string
	runtime    string
	configText string
	timeout    time.Duration
	// Claude's login (claude.go): HOME of the sessions, what `claude auth
	// status --json` answers, more of doctor's environment, service.env.
	home       string
	authOut    string
	authErr    error
	env        []string
	serviceEnv string
	fake       *execx.Fake
}

func newWorld(t *testing.T) *world {
	w := &world{t: t, srv: fakediscord.New(t), dir: t.TempDir(), tmuxV: "tmux 3.4", claudeV: "2.1.328 (Claude Code)"}
	w.bot = w.srv.Main()
	w.api = w.srv.AddChannel(w.bot.GuildID, "api")
	proj := filepath.Join(w.dir, "api")
	_ = os.MkdirAll(proj, 0o755)
	tok := filepath.Join(w.dir, "home.token")
	_ = os.WriteFile(tok, []byte(w.bot.Token), 0o600)
	w.cfg = filepath.Join(w.dir, "config.toml")
	w.configText = fmt.Sprintf("[discord]\napi_base = %q\n[[servers]]\nname = \"home\"\ntoken_file = %q\nguild_id = %q\nowner_ids = [\"100000000000000002\"]\ngeneral_channel_id = %q\n"+
		"  [[servers.projects]]\n  name = \"api\"\n  channel_id = %q\n  path = %q\n", w.srv.URL, tok, w.bot.GuildID, w.bot.ChannelID, w.api, proj)
	w.settings = filepath.Join(w.dir, "claude", "settings.json")
	w.runtime = filepath.Join(w.dir, "rt")
	w.home = filepath.Join(w.dir, "home")
	w.authOut = `{"loggedIn": true, "authMethod": "claude.ai", "apiProvider": "firstParty"}`
	trustProjects(t, w.home, proj)
	return w
}

func (w *world) run() ([]Result, string) {
	w.t.Helper()
	if w.configText != "" {
		if err := os.WriteFile(w.cfg, []byte(w.configText), 0o600); err != nil {
			w.t.Fatal(err)
		}
	}
	var calls []execx.Call
	if !w.noTmux {
		calls = append(calls, execx.Call{Args: []string{"/usr/bin/tmux", "-V"}, Stdout: w.tmuxV + "\n"})
	}
	if !w.noClaude {
		calls = append(calls, execx.Call{Args: []string{"/opt/claude", "--version"}, Stdout: w.claudeV + "\n"},
			execx.Call{Args: []string{"/opt/claude", "auth", "status", "--json"}, Stdout: w.authOut, Err: w.authErr})
	}
	look := func(name string) (string, error) {
		switch {
		case name == "tmux" && !w.noTmux:
			return "/usr/bin/tmux", nil
		case name == "claude" && !w.noClaude:
			return "/opt/claude", nil
		}
		return "", errors.New("not found")
	}
	bins := func() (string, string, error) {
		if w.noHookBins {
			return "", "", errors.New("ccbridge-hook-stop not found next to ccbridge or on PATH (run ./install.sh)")
		}
		return "/bin/ccbridge-hook-stop", "/bin/ccbridge-hook-pretool", nil
	}
	var out bytes.Buffer
	w.fake = execx.NewFake(w.t, calls...)
	rs := Run(context.Background(), Env{ConfigPath: w.cfg, Runner: w.fake, LookPath: look, RuntimeDir: w.runtime,
		ClaudeSettings: w.settings, HookBinaries: bins, Timeout: w.timeout,
		Environ: append([]string{"HOME=" + w.home, "PATH=/usr/bin"}, w.env...), ServiceEnvFile: w.serviceEnv}, &out)
	return rs, out.String()
}

func find(rs []Result, name string) Result {
	for _, r := range rs {
		if r.Name == name {
			return r
		}
	}
	return Result{Name: name, Status: -1}
}

// A project channel every member can read is a warning with the fix; one
// hidden from @everyone is fine (security review 2, finding 8).
func TestDoctorWarnsAboutAPublicProjectChannel(t *testing.T) {
	w := newWorld(t)
	rs, out := w.run()
	r := find(rs, "bot home project api privacy")
	if r.Status != Warn || !strings.Contains(r.Detail, "every member of the server can read it") || !strings.Contains(out, "→ in Discord: #api → Edit Channel → Permissions → @everyone → View Channel off") {
		t.Errorf("public channel: %v %q\n%s", r.Status, r.Detail, out)
	}
	if !Passed(rs) {
		t.Errorf("a warning failed doctor:\n%s", out)
	}
	w = newWorld(t)
	w.srv.SetOverwrite(w.bot, w.api, w.bot.GuildID, fakediscord.OverwriteRole, 0, fakediscord.PermViewChannel)
	w.srv.SetOverwrite(w.bot, w.api, w.bot.UserID, fakediscord.OverwriteMember, fakediscord.PermViewChannel, 0)
	rs, out = w.run()
	if r := find(rs, "bot home project api privacy"); r.Status != OK {
		t.Errorf("private channel: %v %q\n%s", r.Status, r.Detail, out)
	}
}

func TestDoctorAllGreen(t *testing.T) {
	w := newWorld(t)
	rs, out := w.run()
	if !Passed(rs) {
		t.Fatalf("not all green:\n%s", out)
	}
	for _, name := range []string{"config", "tmux", "claude", "hook binaries", "bot home", "bot home intents", "bot home server",
		"bot home panel", "bot home project api", "runtime dir"} {
		if r := find(rs, name); r.Status != OK {
			t.Errorf("%s: %v %s", name, r.Status, r.Detail)
		}
	}
	for _, want := range []string{"tmux 3.4", "2.1.328", "main-bot", "#api: every permission", "not registered", "daemon"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// Each broken thing fails (or warns about) its check, with a fix, and only
// a Fail makes doctor fail.
func TestDoctorEachFailingCheck(t *testing.T) {
	cases := []struct {
		name   string
		break_ func(w *world)
		check  string
		status Status
		detail string
		fix    string
	}{
		{"no tmux", func(w *world) { w.noTmux = true }, "tmux", Fail, "not found", "install tmux 3.2"},
		{"old tmux", func(w *world) { w.tmuxV = "tmux 3.1c" }, "tmux", Fail, "too old", "3.2 or newer"},
		{"no claude", func(w *world) { w.noClaude = true }, "claude", Fail, `"claude" not found`, "npm install -g @anthropic-ai/claude-code"},
		{"old claude", func(w *world) { w.claudeV = "2.0.44 (Claude Code)" }, "claude", Warn, "older than 2.0.45", "claude update"},
		{"no config", func(w *world) { w.configText = ""; _ = os.Remove(w.cfg) }, "config", Fail, "does not exist", "ccbridge setup"},
		{"bad config", func(w *world) {
			w.configText = strings.Replace(w.configText, `owner_ids = ["100000000000000002"]`, `owner_ids = ["me"]`, 1)
		},
			"config", Fail, "not a Discord id", "fix it in "},
		{"bad config by setup", func(w *world) {
			w.configText = "# " + config.SetupHeader + "\n" + strings.Replace(w.configText, `owner_ids = ["100000000000000002"]`, `owner_ids = ["me"]`, 1)
		},
			"config", Fail, "not a Discord id", "re-run `ccbridge setup`"},
		{"no token", func(w *world) { _ = os.Remove(filepath.Join(w.dir, "home.token")) }, "bot home", Fail, "no token", "token_file"},
		{"token variable unset", func(w *world) {
			w.configText = strings.Replace(w.configText, "token_file = ", "token_env = \"CCBRIDGE_DOCTOR_UNSET\"\n#", 1)
		}, "config", Fail, "CCBRIDGE_DOCTOR_UNSET is not set", "export the variable"},
		{"bad token", func(w *world) { _ = os.WriteFile(filepath.Join(w.dir, "home.token"), []byte("nope"), 0o600) }, "bot home", Fail, "HTTP 401", "Reset Token"},
		{"intent off", func(w *world) { w.srv.SetMessageContentIntent(w.bot, false) }, "bot home intents", Fail, "Message Content Intent is off", "Privileged Gateway Intents"},
		{"not in server", func(w *world) { w.srv.LeaveGuild(w.bot) }, "bot home server", Fail, "not in the server", "discord.com/oauth2/authorize"},
		{"no attach, no reactions", func(w *world) {
			w.srv.DenyBotInChannel(w.bot, w.api, fakediscord.PermAttachFiles|fakediscord.PermAddReactions)
		}, "bot home project api", Fail, "lacks Attach Files, Add Reactions", "Edit Channel → Permissions"},
		{"cannot view", func(w *world) {
			w.srv.SetOverwrite(w.bot, w.api, w.bot.GuildID, fakediscord.OverwriteRole, 0, fakediscord.PermViewChannel)
			w.srv.SetBotPermissions(w.bot, 0)
		},
			"bot home project api", Fail, "View Channels", "allow them"},
		{"cannot post the panel", func(w *world) {
			w.srv.DenyBotInChannel(w.bot, w.bot.ChannelID, fakediscord.PermSendMessages|fakediscord.PermReadHistory)
		}, "bot home panel", Fail, "lacks Send Messages, Read Message History", "Permissions"},
		{"no threads in a project", func(w *world) {
			w.srv.DenyBotInChannel(w.bot, w.api, fakediscord.PermCreateThreads|fakediscord.PermSendInThreads)
		}, "bot home project api", Fail, "Send Messages in Threads, Create Public Threads", "Permissions"},
		{"channel gone", func(w *world) {
			w.configText = strings.Replace(w.configText, w.api, "100000000000000099", 1)
		}, "bot home project api", Fail, "not in the server", "channel id"},
		{"unsafe runtime dir", func(w *world) { _ = os.Mkdir(w.runtime, 0o755) }, "runtime dir", Fail, "mode 755", "remove"},
		{"no hook binaries", func(w *world) { w.noHookBins = true }, "hook binaries", Fail, "ccbridge-hook-stop not found", "install.sh"},
		{"stale hooks", func(w *world) {
			_ = os.MkdirAll(filepath.Dir(w.settings), 0o700)
			_ = os.WriteFile(w.settings, []byte(`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"/old/ccbridge-hook-stop --global"}]}]}}`), 0o600)
		}, "install-hooks", Warn, "other binaries", "ccbridge install-hooks"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			c.break_(w)
			rs, out := w.run()
			r := find(rs, c.check)
			if r.Status != c.status || !strings.Contains(r.Detail, c.detail) || !strings.Contains(r.Fix, c.fix) {
				t.Errorf("%s = %v %q fix %q; want %v with %q, fix %q\n%s", c.check, r.Status, r.Detail, r.Fix, c.status, c.detail, c.fix, out)
			}
			if Passed(rs) != (c.status != Fail) {
				t.Errorf("Passed = %v with a %v\n%s", Passed(rs), c.status, out)
			}
			if c.status >= Warn && !strings.Contains(out, "→ "+strings.Split(r.Fix, "\n")[0]) {
				t.Errorf("the fix is not printed:\n%s", out)
			}
		})
	}
}

func TestDoctorSeesARunningDaemon(t *testing.T) {
	w := newWorld(t)
	dir, err := state.Open(w.runtime)
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := dir.LockDaemon()
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	rs, out := w.run()
	if r := find(rs, "daemon"); r.Status != OK || r.Detail != "running" {
		t.Errorf("daemon: %+v\n%s", r, out)
	}
	unlock()
	if rs, _ = w.run(); find(rs, "daemon").Status != Info {
		t.Errorf("daemon after unlock: %+v", find(rs, "daemon"))
	}
}

func TestDoctorSeesRegisteredHooks(t *testing.T) {
	w := newWorld(t)
	_ = os.MkdirAll(filepath.Dir(w.settings), 0o700)
	// What `ccbridge install-hooks` writes for these binaries.
	w.noHookBins = false
	rs, _ := w.run()
	if find(rs, "install-hooks").Status != Info {
		t.Fatalf("before: %+v", find(rs, "install-hooks"))
	}
	doc := installHooksDoc(t)
	_ = os.WriteFile(w.settings, doc, 0o600)
	rs, out := w.run()
	if r := find(rs, "install-hooks"); r.Status != OK {
		t.Errorf("after install-hooks: %+v\n%s", r, out)
	}
}

func installHooksDoc(t *testing.T) []byte {
	t.Helper()
	doc, _, err := claudehook.AddGlobalHooks(nil, "/bin/ccbridge-hook-stop", "/bin/ccbridge-hook-pretool", config.DefaultPromptTimeout)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// The panel channel needs no thread, file or reaction permissions.
func TestDoctorPanelNeedsLess(t *testing.T) {
	w := newWorld(t)
	w.srv.DenyBotInChannel(w.bot, w.bot.ChannelID, fakediscord.PermCreateThreads|fakediscord.PermSendInThreads|fakediscord.PermAttachFiles|fakediscord.PermAddReactions)
	rs, out := w.run()
	if r := find(rs, "bot home panel"); r.Status != OK || !Passed(rs) {
		t.Errorf("panel: %+v\n%s", r, out)
	}
}

// On a network that does not answer, doctor says what it is checking
// before the wait, and then that Discord (at the configured host) did not
// answer in time.
func TestDoctorSaysWhatItWaitsFor(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	w := newWorld(t)
	hole := "http://" + ln.Addr().String()
	w.configText = strings.Replace(w.configText, w.srv.URL, hole, 1)
	w.timeout = 300 * time.Millisecond
	rs, out := w.run()
	r := find(rs, "bot home")
	if r.Status != Fail || !strings.Contains(r.Detail, "Discord did not answer in ") || !strings.Contains(r.Detail, hole) || strings.Contains(r.Detail, "discord.com") {
		t.Errorf("bot home = %v %q", r.Status, r.Detail)
	}
	if i, j := strings.Index(out, "checking with Discord ("+hole+")…"), strings.Index(out, "FAIL  bot home"); i < 0 || j < i {
		t.Errorf("no word of what is checked before the wait:\n%s", out)
	}
}

// withOpenRoots lets the world's server /open folders under its dir.
func (w *world) withOpenRoots() {
	w.configText = strings.Replace(w.configText, "general_channel_id =", fmt.Sprintf("open_roots = [%q]\ngeneral_channel_id =", w.dir), 1)
}

// With open_roots, /open works in the panel channel too: one every member
// can read is a warning (security-3 #3); without open_roots, or hidden
// from @everyone, it is not.
func TestDoctorWarnsAboutAPublicPanelChannelWithOpenRoots(t *testing.T) {
	w := newWorld(t)
	w.withOpenRoots()
	rs, out := w.run()
	r := find(rs, "bot home panel privacy")
	if r.Status != Warn || !strings.Contains(r.Detail, "every member of the server can read it") || !strings.Contains(r.Detail, "/open") ||
		!strings.Contains(out, "@everyone → View Channel off") {
		t.Errorf("public panel with open_roots: %v %q\n%s", r.Status, r.Detail, out)
	}
	if !Passed(rs) {
		t.Errorf("a warning failed doctor:\n%s", out)
	}
	w = newWorld(t)
	rs, out = w.run()
	if r := find(rs, "bot home panel privacy"); r.Status != -1 {
		t.Errorf("without open_roots: %+v\n%s", r, out)
	}
	w = newWorld(t)
	w.withOpenRoots()
	w.srv.SetOverwrite(w.bot, w.bot.ChannelID, w.bot.GuildID, fakediscord.OverwriteRole, 0, fakediscord.PermViewChannel)
	w.srv.SetOverwrite(w.bot, w.bot.ChannelID, w.bot.UserID, fakediscord.OverwriteMember, fakediscord.PermViewChannel, 0)
	rs, out = w.run()
	if r := find(rs, "bot home panel privacy"); r.Status != OK {
		t.Errorf("private panel: %v %q\n%s", r.Status, r.Detail, out)
	}
}

// With open_roots, the panel channel is checked for what /open needs
// there (fidelity-3 P14): a private thread in a channel everyone reads,
// posting, reacting and attaching in it, archiving it.
func TestDoctorChecksWhatOpenNeedsInThePanel(t *testing.T) {
	w := newWorld(t)
	w.withOpenRoots()
	rs, out := w.run()
	if r := find(rs, "bot home panel /open"); r.Status != OK {
		t.Errorf("invite permissions: %v %q\n%s", r.Status, r.Detail, out)
	}
	for deny, want := range map[int64]string{
		fakediscord.PermCreatePrivateThreads:                          "Create Private Threads",
		fakediscord.PermSendInThreads | fakediscord.PermManageThreads: "Send Messages in Threads, Manage Threads",
		fakediscord.PermAddReactions | fakediscord.PermAttachFiles:    "Add Reactions, Attach Files",
	} {
		w := newWorld(t)
		w.withOpenRoots()
		w.srv.DenyBotInChannel(w.bot, w.bot.ChannelID, deny)
		rs, out := w.run()
		r := find(rs, "bot home panel /open")
		if r.Status != Warn || !strings.Contains(r.Detail, "lacks "+want) || !strings.Contains(out, "Edit Channel → Permissions") {
			t.Errorf("denied %s: %v %q\n%s", want, r.Status, r.Detail, out)
		}
	}
	// A private panel channel without Create Private Threads gets public
	// threads, which only its readers see.
	w = newWorld(t)
	w.withOpenRoots()
	w.srv.SetOverwrite(w.bot, w.bot.ChannelID, w.bot.GuildID, fakediscord.OverwriteRole, 0, fakediscord.PermViewChannel)
	w.srv.SetOverwrite(w.bot, w.bot.ChannelID, w.bot.UserID, fakediscord.OverwriteMember, fakediscord.PermViewChannel, fakediscord.PermCreatePrivateThreads)
	rs, out = w.run()
	if r := find(rs, "bot home panel /open"); r.Status != OK {
		t.Errorf("private panel without Create Private Threads: %v %q\n%s", r.Status, r.Detail, out)
	}
}

// Config problems are printed one per line, as config check prints them;
// setup is offered again only to a config setup wrote.
func TestDoctorListsConfigProblemsOnePerLine(t *testing.T) {
	w := newWorld(t)
	w.configText = strings.Replace(w.configText, `owner_ids = ["100000000000000002"]`, `owner_ids = ["me"]`+"\n"+`tmux_session = "a.b"`, 1)
	rs, out := w.run()
	r := find(rs, "config")
	if strings.Contains(r.Detail, "; ") || strings.Contains(r.Fix, "setup") {
		t.Errorf("config = %q fix %q", r.Detail, r.Fix)
	}
	for _, want := range []string{"FAIL  config                 servers[home].owner_ids[0]: \"me\" is not a Discord id", "\n" + strings.Repeat(" ", 29) + "servers[home].tmux_session: "} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
}
