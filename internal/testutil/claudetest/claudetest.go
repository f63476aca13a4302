// Package claudetest runs the real Claude Code CLI (pinned, installed by
// `make test` into .cache/) in a tmux pane of a private server, in a
// throwaway HOME, against a fake model. It is the Claude side of the
// end-to-end tier.
package claudetest

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/testutil/testenv"
	"github.com/ccbridge/ccbridge/internal/tmux"
)

// Version is the Claude Code release the project is verified against.
const Version = "2.1.328"

// EnvBinary overrides where the CLI is found.
const EnvBinary = "CCBRIDGE_TEST_CLAUDE"

// EnvVersion overrides the release EnvBinary must be (make e2e-latest).
const EnvVersion = "CCBRIDGE_TEST_CLAUDE_VERSION"

// APIKey is the fake key the CLI sends to the fake model.
const APIKey = "sk-ant-test-0123456789abcdefghij"

// Binary returns the pinned CLI, or skips (fails under
// CCBRIDGE_TEST_DISALLOW_SKIP) when it is not installed.
func Binary(t testing.TB) string {
	t.Helper()
	p := os.Getenv(EnvBinary)
	if p == "" {
		p = filepath.Join(ModuleRoot(t), ".cache", "claude-code", "node_modules", "@anthropic-ai", "claude-code-linux-x64", "claude")
	}
	out, err := exec.Command(p, "--version").Output()
	if err != nil {
		testenv.SkipUnlessAllowed(t, "Claude Code CLI not installed at "+p+" (run make test, which installs it)")
	}
	want := Version
	if v := os.Getenv(EnvVersion); v != "" {
		want = v
	}
	if !strings.HasPrefix(string(out), want) {
		t.Fatalf("%s is %q; the tests are pinned to %s", p, strings.TrimSpace(string(out)), want)
	}
	return p
}

// ModuleRoot finds the directory holding go.mod.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}

// Options describe one Claude session.
type Options struct {
	Tmux     *tmux.Server
	Session  string            // tmux session name
	Dir      string            // project directory
	ModelURL string            // the fake model
	Settings []byte            // written to a file and passed with --settings
	Env      map[string]string // extra pane environment
	Args     []string          // extra CLI arguments
}

// Claude is a running CLI.
type Claude struct {
	Pane string
	Home string
	tmux *tmux.Server
}

// Start launches the CLI and waits until its input box is ready.
func Start(t testing.TB, opt Options) *Claude {
	t.Helper()
	bin := Binary(t)
	dir, _ := filepath.EvalSymlinks(opt.Dir)
	home := NewHome(t, dir)
	argv := []string{bin, "--permission-mode", "default"}
	if opt.Settings != nil {
		f := filepath.Join(home, "ccbridge-settings.json")
		if err := os.WriteFile(f, opt.Settings, 0o600); err != nil {
			t.Fatal(err)
		}
		argv = append(argv, "--settings", f)
	}
	env := Env(home, opt.ModelURL)
	for k, v := range opt.Env {
		env[k] = v
	}
	// ≤109 columns keeps the diff side panel closed.
	pane, err := opt.Tmux.NewPane(context.Background(), tmux.PaneSpec{Session: opt.Session, Window: "claude", Dir: dir,
		Env: env, Argv: append(argv, opt.Args...), Width: 100, Height: 50})
	if err != nil {
		t.Fatal(err)
	}
	c := &Claude{Pane: pane, Home: home, tmux: opt.Tmux}
	// Registered after the HOME and the test's earlier temp dirs, so it
	// runs before they are removed: Claude (and the hooks it waits for on
	// its way out) must stop writing there first.
	t.Cleanup(func() { c.stop() })
	c.WaitReady(t, 60*time.Second)
	return c
}

// exitWait bounds the wait for a killed Claude to exit.
const exitWait = 10 * time.Second

// stop kills Claude's pane and waits until its process is gone.
func (c *Claude) stop() {
	ctx := context.Background()
	pid := 0
	if panes, err := c.tmux.ListPanes(ctx); err == nil {
		for _, p := range panes {
			if p.ID == c.Pane {
				pid = p.PID
			}
		}
	}
	_ = c.tmux.KillPane(ctx, c.Pane)
	for deadline := time.Now().Add(exitWait); pid > 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
	}
}

// WaitReady waits for the input box (❯ between two rules) with no turn running.
func (c *Claude) WaitReady(t testing.TB, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var screen string
	for time.Now().Before(deadline) {
		screen, _ = c.tmux.Capture(context.Background(), c.Pane, 0)
		if session.InputReady(screen) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("Claude never showed its input box; screen:\n%s", screen)
}

// NewHome makes a throwaway HOME in which Claude Code starts without
// onboarding and trusts dirs.
func NewHome(t testing.TB, dirs ...string) string {
	t.Helper()
	home := t.TempDir()
	projects := map[string]any{}
	for _, d := range dirs {
		if real, err := filepath.EvalSymlinks(d); err == nil {
			d = real
		}
		projects[d] = map[string]any{"hasTrustDialogAccepted": true}
	}
	writeJSON(t, filepath.Join(home, ".claude.json"), map[string]any{
		"hasCompletedOnboarding": true, "lastOnboardingVersion": Version,
		"customApiKeyResponses": map[string]any{"approved": []string{APIKey[len(APIKey)-20:]}, "rejected": []string{}},
		"projects":              projects,
	})
	return home
}

// Env is the environment Claude Code needs to run offline against the fake model.
func Env(home, modelURL string) map[string]string {
	return map[string]string{
		"HOME": home, "ANTHROPIC_BASE_URL": modelURL, "ANTHROPIC_API_KEY": APIKey,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "TERM": "xterm-256color",
	}
}

func writeJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, _ := json.Marshal(v)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
