package service

import (
	"bytes"
	"context"
	"encoding/xml"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/execx"
)

func options(t *testing.T, goos string, r execx.Runner) Options {
	home := filepath.Join(t.TempDir(), "home dir") // a space, to test quoting
	exe := filepath.Join(home, ".local", "bin", "ccbridge")
	if err := os.MkdirAll(filepath.Dir(exe), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return Options{OS: goos, Home: home, ConfigHome: filepath.Join(home, ".config"), UID: 1000, User: "alice", Exe: exe,
		ConfigPath: filepath.Join(home, ".config", "ccbridge", "config.toml"), LogFile: filepath.Join(home, ".local", "state", "ccbridge", "ccbridge.log"),
		Env: map[string]string{"CCBRIDGE_TOKEN_HOME": "tok-en$%\"x"}, Path: SearchPath(goos, exe, "/opt/claude/bin/claude", "/usr/bin/tmux"),
		Runner: r, LingerDir: filepath.Join(home, "linger"), SystemdVersion: 252}
}

func perm(t *testing.T, p string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func TestInstallSystemdUserUnit(t *testing.T) {
	f := execx.NewFake(t,
		execx.Call{Args: []string{"systemctl", "--user", "daemon-reload"}},
		execx.Call{Args: []string{"systemctl", "--user", "enable", Unit}},
		execx.Call{Args: []string{"systemctl", "--user", "reset-failed", Unit}},
		execx.Call{Args: []string{"systemctl", "--user", "restart", Unit}},
	)
	o := options(t, "linux", f)
	var out bytes.Buffer
	if err := Install(context.Background(), o, &out); err != nil {
		t.Fatal(err)
	}
	unitPath := filepath.Join(o.Home, ".config", "systemd", "user", "ccbridge.service")
	b, err := os.ReadFile(unitPath)
	if err != nil {
		t.Fatal(err)
	}
	unit := string(b)
	q := func(s string) string { return `"` + s + `"` }
	for _, want := range []string{
		"ExecStart=" + q(o.Exe) + " run --config " + q(o.ConfigPath) + " --log-file " + q(o.LogFile) + "\n",
		"Environment=\"PATH=" + filepath.Dir(o.Exe) + ":/opt/claude/bin:/usr/bin:/usr/local/bin:/bin\"\n",
		"Environment=" + q("CCBRIDGE_CONFIG="+o.ConfigPath) + "\n",
		"EnvironmentFile=-" + filepath.Join(o.Home, ".config", "ccbridge", "service.env") + "\n",
		"Restart=on-failure\n", "KillMode=process\n", "WantedBy=default.target\n",
		"ExecReload=/bin/kill -HUP $MAINPID\n", // systemctl reload re-reads the config
	} {
		if !strings.Contains(unit, want) {
			t.Errorf("unit lacks %q:\n%s", want, unit)
		}
	}
	if strings.Contains(unit, "tok-en") {
		t.Error("the token is in the unit file")
	}
	if m := perm(t, unitPath); m != 0o644 {
		t.Errorf("unit mode %o", m)
	}
	env := filepath.Join(o.Home, ".config", "ccbridge", "service.env")
	if m := perm(t, env); m != 0o600 {
		t.Errorf("env file mode %o", m)
	}
	if b, _ := os.ReadFile(env); !strings.Contains(string(b), `CCBRIDGE_TOKEN_HOME="tok-en$%\"x"`) {
		t.Errorf("env file:\n%s", b)
	}
	if !strings.Contains(out.String(), "loginctl enable-linger alice") {
		t.Errorf("no linger advice:\n%s", out.String())
	}
	if perm(t, filepath.Dir(o.LogFile)) != 0o700 {
		t.Error("log dir not created 0700")
	}
	verify(t, unitPath)

	// Lingering already: no advice.
	_ = os.MkdirAll(o.LingerDir, 0o755)
	_ = os.WriteFile(filepath.Join(o.LingerDir, "alice"), nil, 0o644)
	o.Runner = execx.NewFake(t, execx.Call{Args: []string{"systemctl", "--user", "daemon-reload"}},
		execx.Call{Args: []string{"systemctl", "--user", "enable", Unit}}, execx.Call{Args: []string{"systemctl", "--user", "reset-failed", Unit}},
		execx.Call{Args: []string{"systemctl", "--user", "restart", Unit}})
	out.Reset()
	if err := Install(context.Background(), o, &out); err != nil || strings.Contains(out.String(), "enable-linger") {
		t.Errorf("second install: %v\n%s", err, out.String())
	}
}

// An env file left readable (0644) by an earlier hand is replaced by a new
// 0600 file, never rewritten in place: the tokens are at no moment in a
// file others may read (a reader holding the old one sees only the old).
func TestInstallNeverWritesTokensIntoAReadableFile(t *testing.T) {
	f := execx.NewFake(t,
		execx.Call{Args: []string{"systemctl", "--user", "daemon-reload"}},
		execx.Call{Args: []string{"systemctl", "--user", "enable", Unit}},
		execx.Call{Args: []string{"systemctl", "--user", "reset-failed", Unit}},
		execx.Call{Args: []string{"systemctl", "--user", "restart", Unit}},
	)
	o := options(t, "linux", f)
	env := o.EnvPath()
	if err := os.MkdirAll(filepath.Dir(env), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(env, []byte("OLD=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	held := filepath.Join(filepath.Dir(env), "held")
	if err := os.Link(env, held); err != nil {
		t.Fatal(err)
	}
	if err := Install(context.Background(), o, io.Discard); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(held); strings.Contains(string(b), "tok-en") {
		t.Errorf("the token went into the old 0644 file:\n%s", b)
	}
	if m := perm(t, env); m != 0o600 {
		t.Errorf("env file mode %o", m)
	}
}

// verify runs systemd-analyze verify on the unit when it is installed.
func verify(t *testing.T, unit string) {
	t.Helper()
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Log("systemd-analyze not installed; unit not verified by systemd")
		return
	}
	// --user needs a user manager; --man=no skips the Documentation check.
	cmd := exec.Command("systemd-analyze", "verify", "--man=no", unit)
	out, err := cmd.CombinedOutput()
	// systemd-analyze also reports on units it pulls in; only lines about
	// ours matter.
	var ours []string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "ccbridge") {
			ours = append(ours, line)
		}
	}
	if len(ours) > 0 {
		t.Errorf("systemd-analyze verify (%v):\n%s", err, strings.Join(ours, "\n"))
	}
}

func TestSystemdQuoting(t *testing.T) {
	for in, want := range map[string]string{
		"/usr/bin/x":   "/usr/bin/x",
		"/a b/x":       `"/a b/x"`,
		`/a"b`:         `"/a\"b"`,
		"/100%/x":      "/100%%/x",
		"/$HOME/x":     "/$$HOME/x",
		`/back\slash`:  `"/back\\slash"`,
		"PATH=/a:/b c": `"PATH=/a:/b c"`,
	} {
		if got := sdQuote(in); got != want {
			t.Errorf("sdQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestInstallLaunchdAgent(t *testing.T) {
	o := options(t, "darwin", nil)
	plist := filepath.Join(o.Home, "Library", "LaunchAgents", Label+".plist")
	f := execx.NewFake(t,
		execx.Call{Args: []string{"launchctl", "bootout", "gui/1000/" + Label}, Err: execx.Exit(3, "Boot-out failed: 3: No such process")},
		execx.Call{Args: []string{"launchctl", "bootstrap", "gui/1000", plist}},
	)
	o.Runner = f
	if err := Install(context.Background(), o, io.Discard); err != nil {
		t.Fatal(err)
	}
	if m := perm(t, plist); m != 0o600 {
		t.Errorf("plist mode %o (it holds the token)", m)
	}
	b, _ := os.ReadFile(plist)
	var doc struct {
		Dict struct {
			Items []struct {
				XMLName xml.Name
				Value   string `xml:",chardata"`
			} `xml:",any"`
		} `xml:"dict"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("plist is not XML: %v\n%s", err, b)
	}
	text := string(b)
	for _, want := range []string{"<string>" + Label + "</string>", "<string>" + o.Exe + "</string>", "<string>--log-file</string>",
		"<key>CCBRIDGE_TOKEN_HOME</key>\n    <string>tok-en$%&quot;x</string>", "<key>SuccessfulExit</key>\n    <false/>",
		"<key>AbandonProcessGroup</key>\n  <true/>", "<key>PATH</key>"} {
		if !strings.Contains(text, want) {
			t.Errorf("plist lacks %q:\n%s", want, text)
		}
	}
	if _, err := exec.LookPath("plutil"); err == nil {
		if out, err := exec.Command("plutil", "-lint", plist).CombinedOutput(); err != nil {
			t.Errorf("plutil: %v %s", err, out)
		}
	}
}

func TestUninstallAndStatus(t *testing.T) {
	install := []execx.Call{{Args: []string{"systemctl", "--user", "daemon-reload"}}, {Args: []string{"systemctl", "--user", "enable", Unit}},
		{Args: []string{"systemctl", "--user", "reset-failed", Unit}}, {Args: []string{"systemctl", "--user", "restart", Unit}}}
	statusCall := execx.Call{Args: []string{"systemctl", "--user", "status", "--no-pager", Unit}, Stdout: "● ccbridge.service\n   Active: active (running)\n"}
	calls := append(install, statusCall,
		execx.Call{Args: []string{"systemctl", "--user", "disable", "--now", Unit}},
		execx.Call{Args: []string{"systemctl", "--user", "daemon-reload"}})
	o := options(t, "linux", execx.NewFake(t, calls...))
	var out bytes.Buffer
	if running, err := Status(context.Background(), o, &out); running || err != nil || !strings.Contains(out.String(), "not installed") {
		t.Fatalf("status before install: %v %v %s", running, err, out.String())
	}
	if err := Install(context.Background(), o, io.Discard); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if running, err := Status(context.Background(), o, &out); !running || err != nil || !strings.Contains(out.String(), "active (running)") {
		t.Fatalf("status: %v %v %s", running, err, out.String())
	}
	out.Reset()
	if err := Uninstall(context.Background(), o, &out); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{o.UnitPath(), o.EnvPath()} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s left behind", p)
		}
	}
	if !strings.Contains(out.String(), "left alone") {
		t.Errorf("uninstall output:\n%s", out.String())
	}
	out.Reset()
	// Nothing installed: no systemctl is run (the fake has no more calls),
	// so none of its noise is printed.
	if err := Uninstall(context.Background(), o, &out); err != nil || out.String() != "no ccbridge service was installed; nothing changed\n" {
		t.Errorf("second uninstall: %v %s", err, out.String())
	}
}

func TestStatusReportsAStoppedService(t *testing.T) {
	o := options(t, "linux", nil)
	o.Runner = execx.NewFake(t, execx.Call{Args: []string{"systemctl", "--user", "status", "--no-pager", Unit},
		Stdout: "○ ccbridge.service\n   Active: inactive (dead)\n", Err: execx.Exit(3, "")})
	_ = os.MkdirAll(filepath.Dir(o.UnitPath()), 0o700)
	_ = os.WriteFile(o.UnitPath(), []byte(SystemdUnit(o)), 0o644)
	var out bytes.Buffer
	running, err := Status(context.Background(), o, &out)
	if running || err != nil || !strings.Contains(out.String(), "inactive (dead)") {
		t.Errorf("status: %v %v\n%s", running, err, out.String())
	}
}

func TestInstallRefusesOtherSystems(t *testing.T) {
	o := options(t, "windows", execx.NewFake(t))
	if err := Install(context.Background(), o, io.Discard); err == nil || !strings.Contains(err.Error(), "--log-file") {
		t.Errorf("err = %v", err)
	}
}

// systemctl refusing the install undoes it: new files removed, a unit it
// enabled disabled again, systemd told; an earlier install's files come
// back byte for byte.
func TestInstallUndoesWhatSystemdRefused(t *testing.T) {
	noBus := execx.Exit(1, "Failed to connect to bus: No medium found")
	o := options(t, "linux", execx.NewFake(t,
		execx.Call{Args: []string{"systemctl", "--user", "daemon-reload"}},
		execx.Call{Args: []string{"systemctl", "--user", "enable", Unit}},
		execx.Call{Args: []string{"systemctl", "--user", "reset-failed", Unit}},
		execx.Call{Args: []string{"systemctl", "--user", "restart", Unit}, Err: noBus},
		execx.Call{Args: []string{"systemctl", "--user", "disable", Unit}},
		execx.Call{Args: []string{"systemctl", "--user", "daemon-reload"}},
	))
	err := Install(context.Background(), o, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "Failed to connect to bus") || !strings.Contains(err.Error(), "removed again") {
		t.Fatalf("err = %v", err)
	}
	for _, p := range []string{o.UnitPath(), o.EnvPath()} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s left behind", p)
		}
	}

	// An earlier install's files: put back as they were.
	o = options(t, "linux", execx.NewFake(t,
		execx.Call{Args: []string{"systemctl", "--user", "daemon-reload"}, Err: noBus},
	))
	_ = os.MkdirAll(filepath.Dir(o.UnitPath()), 0o700)
	_ = os.MkdirAll(filepath.Dir(o.EnvPath()), 0o700)
	_ = os.WriteFile(o.UnitPath(), []byte("old unit\n"), 0o644)
	_ = os.WriteFile(o.EnvPath(), []byte("OLD=1\n"), 0o600)
	if err := Install(context.Background(), o, io.Discard); err == nil || !strings.Contains(err.Error(), "back as they were") {
		t.Fatalf("err = %v", err)
	}
	if b, _ := os.ReadFile(o.UnitPath()); string(b) != "old unit\n" {
		t.Errorf("unit: %q", b)
	}
	if b, _ := os.ReadFile(o.EnvPath()); string(b) != "OLD=1\n" || perm(t, o.EnvPath()) != 0o600 {
		t.Errorf("env file: %q %o", b, perm(t, o.EnvPath()))
	}
}

// An installed service that is not running: status says why, from the
// daemon's log or the service manager.
func TestStatusSaysWhyItIsNotRunning(t *testing.T) {
	o := options(t, "linux", nil)
	o.Runner = execx.NewFake(t,
		execx.Call{Args: []string{"systemctl", "--user", "status", "--no-pager", Unit}, Stdout: "× ccbridge.service\n   Active: failed\n", Err: execx.Exit(3, "")},
		execx.Call{Args: []string{"systemctl", "--user", "status", "--no-pager", Unit}, Err: execx.Exit(1, "Failed to connect to bus: No medium found")})
	_ = os.MkdirAll(filepath.Dir(o.UnitPath()), 0o700)
	_ = os.WriteFile(o.UnitPath(), []byte(SystemdUnit(o)), 0o644)
	_ = os.MkdirAll(filepath.Dir(o.LogFile), 0o700)
	_ = os.WriteFile(o.LogFile, []byte("time=x level=INFO msg=\"ccbridge starting\"\nccbridge: server home: Discord refused the bot token: copy a fresh token\n"), 0o600)
	var out bytes.Buffer
	if running, err := Status(context.Background(), o, &out); running || err != nil || !strings.Contains(out.String(), "why: the last lines of "+o.LogFile) ||
		!strings.Contains(out.String(), "Discord refused the bot token") {
		t.Errorf("status: %v %v\n%s", running, err, out.String())
	}
	out.Reset()
	if running, err := Status(context.Background(), o, &out); running || err != nil || !strings.Contains(out.String(), "systemd's user manager cannot be reached") {
		t.Errorf("status without a bus: %v %v\n%s", running, err, out.String())
	}
}

// Uninstall names the sessions' real tmux socket.
func TestUninstallNamesTheSocket(t *testing.T) {
	o := options(t, "linux", execx.NewFake(t,
		execx.Call{Args: []string{"systemctl", "--user", "disable", "--now", Unit}},
		execx.Call{Args: []string{"systemctl", "--user", "daemon-reload"}}))
	o.Socket = "work"
	_ = os.MkdirAll(filepath.Dir(o.UnitPath()), 0o700)
	_ = os.WriteFile(o.UnitPath(), []byte(SystemdUnit(o)), 0o644)
	var out bytes.Buffer
	if err := Uninstall(context.Background(), o, &out); err != nil || !strings.Contains(out.String(), "tmux -L work kill-server") || strings.Contains(out.String(), "<socket>") {
		t.Errorf("uninstall: %v\n%s", err, out.String())
	}
}

// service.env holds the tokens: a config dir inside a git work tree
// (dotfiles) gets a warning.
func TestInstallWarnsAboutAGitTree(t *testing.T) {
	o := options(t, "linux", execx.NewFake(t,
		execx.Call{Args: []string{"systemctl", "--user", "daemon-reload"}},
		execx.Call{Args: []string{"systemctl", "--user", "enable", Unit}},
		execx.Call{Args: []string{"systemctl", "--user", "reset-failed", Unit}},
		execx.Call{Args: []string{"systemctl", "--user", "restart", Unit}}))
	_ = os.MkdirAll(filepath.Join(filepath.Dir(o.ConfigPath), ".git"), 0o700)
	var out bytes.Buffer
	if err := Install(context.Background(), o, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "warning: "+o.EnvPath()+" is inside the git work tree") {
		t.Errorf("no warning:\n%s", out.String())
	}
}

// The service's PATH has Homebrew's directory on macOS only.
func TestSearchPathPerSystem(t *testing.T) {
	if p := SearchPath("linux", "/home/a/bin/ccbridge"); p != "/home/a/bin:/usr/local/bin:/usr/bin:/bin" {
		t.Errorf("linux: %s", p)
	}
	if p := SearchPath("darwin", "/Users/a/bin/ccbridge"); p != "/Users/a/bin:/usr/local/bin:/opt/homebrew/bin:/usr/bin:/bin" {
		t.Errorf("darwin: %s", p)
	}
}

// Without a systemd user bus, install says what to do instead.
func TestInstallWithoutSystemdOffersAnAlternative(t *testing.T) {
	o := options(t, "linux", execx.NewFake(t,
		execx.Call{Args: []string{"systemctl", "--user", "daemon-reload"}, Err: execx.Exit(1, "Failed to connect to bus: No medium found")},
	))
	err := Install(context.Background(), o, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "ccbridge run --log-file "+o.LogFile) || !strings.Contains(err.Error(), "tmux") {
		t.Fatalf("err = %v", err)
	}
}

// TMUX_TMPDIR and CCBRIDGE_RUNTIME_DIR set in the installing shell reach
// the service, so `tmux -L ccbridge attach` finds its sessions.
func TestInstallCarriesTheTmuxAndRuntimeDirs(t *testing.T) {
	o := options(t, "linux", execx.NewFake(t,
		execx.Call{Args: []string{"systemctl", "--user", "daemon-reload"}},
		execx.Call{Args: []string{"systemctl", "--user", "enable", Unit}},
		execx.Call{Args: []string{"systemctl", "--user", "reset-failed", Unit}},
		execx.Call{Args: []string{"systemctl", "--user", "restart", Unit}},
	))
	t.Setenv("TMUX_TMPDIR", "/tmp/my tmux")
	t.Setenv("CCBRIDGE_RUNTIME_DIR", "")
	o.Env = WithShellDirs(o.Env)
	if err := Install(context.Background(), o, io.Discard); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(o.EnvPath())
	if !strings.Contains(string(b), `TMUX_TMPDIR="/tmp/my tmux"`) || strings.Contains(string(b), "CCBRIDGE_RUNTIME_DIR=") {
		t.Errorf("service.env:\n%s", b)
	}
}

// A unit that hit systemd's start limit refuses to start until its failed
// state is reset: install resets it first (its failure is no reason to
// stop), and a start limit hit anyway is said with what to do.
func TestInstallClearsAndExplainsTheStartLimit(t *testing.T) {
	o := options(t, "linux", execx.NewFake(t,
		execx.Call{Args: []string{"systemctl", "--user", "daemon-reload"}},
		execx.Call{Args: []string{"systemctl", "--user", "enable", Unit}},
		execx.Call{Args: []string{"systemctl", "--user", "reset-failed", Unit}, Err: execx.Exit(1, "Unit ccbridge.service not loaded.")},
		execx.Call{Args: []string{"systemctl", "--user", "restart", Unit}},
	))
	if err := Install(context.Background(), o, io.Discard); err != nil {
		t.Fatal(err)
	}

	limit := execx.Exit(1, "Job for ccbridge.service failed.\nSee \"systemctl --user status ccbridge.service\" and \"journalctl --user -xeu ccbridge.service\" for details.\n"+
		"ccbridge.service: Start request repeated too quickly.")
	o = options(t, "linux", execx.NewFake(t,
		execx.Call{Args: []string{"systemctl", "--user", "daemon-reload"}},
		execx.Call{Args: []string{"systemctl", "--user", "enable", Unit}},
		execx.Call{Args: []string{"systemctl", "--user", "reset-failed", Unit}},
		execx.Call{Args: []string{"systemctl", "--user", "restart", Unit}, Err: limit},
		execx.Call{Args: []string{"systemctl", "--user", "disable", Unit}},
		execx.Call{Args: []string{"systemctl", "--user", "daemon-reload"}},
	))
	err := Install(context.Background(), o, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "systemctl --user reset-failed ccbridge") || strings.Contains(err.Error(), "is this a systemd session") {
		t.Fatalf("err = %v", err)
	}
}
