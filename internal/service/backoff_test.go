package service

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/execx"
)

// A daemon that keeps failing is restarted less and less often, and not
// for ever: each start IDENTIFYs its bots, and Discord resets a token past
// 1000 a day (fidelity review 3, D5). systemd 254 and later back off by
// themselves (RestartSteps=); older ones restart every 30 s and give up
// after 20 starts in an hour. Either unit is valid for its systemd.
func TestSystemdUnitBacksOffRestarts(t *testing.T) {
	o := options(t, "linux", nil)
	section := func(unit, name string) string {
		_, rest, _ := strings.Cut(unit, "["+name+"]\n")
		s, _, _ := strings.Cut(rest, "\n[")
		return s
	}
	o.SystemdVersion = 252
	old := SystemdUnit(o)
	for sec, want := range map[string][]string{"Unit": {"StartLimitIntervalSec=1h\n", "StartLimitBurst=20\n"}, "Service": {"Restart=on-failure\n", "RestartSec=30\n"}} {
		for _, w := range want {
			if !strings.Contains(section(old, sec), w) {
				t.Errorf("systemd 252: [%s] lacks %q:\n%s", sec, w, old)
			}
		}
	}
	if strings.Contains(old, "RestartSteps") || strings.Contains(old, "RestartMaxDelaySec") {
		t.Errorf("systemd 252 does not know RestartSteps=:\n%s", old)
	}
	path := filepath.Join(t.TempDir(), Unit)
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	verify(t, path) // systemd here is 252 (Debian 12)

	o.SystemdVersion = 254
	steps := SystemdUnit(o)
	for _, w := range []string{"RestartSec=10\n", "RestartSteps=8\n", "RestartMaxDelaySec=10min\n"} {
		if !strings.Contains(section(steps, "Service"), w) {
			t.Errorf("systemd 254: [Service] lacks %q:\n%s", w, steps)
		}
	}
	if !strings.Contains(section(steps, "Unit"), "StartLimitBurst=20\n") {
		t.Errorf("systemd 254: no start limit:\n%s", steps)
	}

	if plist := LaunchdPlist(o); !strings.Contains(plist, "<key>ThrottleInterval</key>\n  <integer>30</integer>") {
		t.Errorf("launchd restarts sooner than every 30 s:\n%s", plist)
	}
}

// Install asks systemctl which systemd it is when it is not told.
func TestInstallAsksTheSystemdVersion(t *testing.T) {
	f := execx.NewFake(t,
		execx.Call{Args: []string{"systemctl", "--version"}, Stdout: "systemd 256 (256.7-1)\n+PAM +AUDIT -SELINUX\n"},
		execx.Call{Args: []string{"systemctl", "--user", "daemon-reload"}},
		execx.Call{Args: []string{"systemctl", "--user", "enable", Unit}},
		execx.Call{Args: []string{"systemctl", "--user", "reset-failed", Unit}},
		execx.Call{Args: []string{"systemctl", "--user", "restart", Unit}},
	)
	o := options(t, "linux", f)
	o.SystemdVersion = 0
	if err := Install(context.Background(), o, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(o.UnitPath()); !strings.Contains(string(b), "RestartSteps=8\n") {
		t.Errorf("unit for systemd 256:\n%s", b)
	}
}
