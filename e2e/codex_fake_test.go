//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/testutil/claudetest"
	"github.com/ccbridge/ccbridge/internal/testutil/fakeresponses"
	"github.com/ccbridge/ccbridge/internal/testutil/testenv"
	"github.com/ccbridge/ccbridge/internal/testutil/tmuxtest"
	"github.com/ccbridge/ccbridge/internal/tmux"
)

// codexVersion is the Codex CLI release agents.md was verified on (make codex).
const codexVersion = "0.171.0"

// codexKeyEnv names the variable the fake provider's key is read from: any
// name works (env_key), and a private one cannot pick up a real key.
const codexKeyEnv = "CCBRIDGE_TEST_CODEX_KEY"

// codexBinary returns the pinned Codex CLI's native binary, or skips (fails
// under CCBRIDGE_TEST_DISALLOW_SKIP=1) when it is not installed.
func codexBinary(t testing.TB) string {
	t.Helper()
	p := os.Getenv("CCBRIDGE_TEST_CODEX")
	if p == "" {
		p = filepath.Join(claudetest.ModuleRoot(t), ".cache", "codex", "node_modules", "@openai", "codex-linux-x64",
			"vendor", "x86_64-unknown-linux-musl", "bin", "codex")
	}
	out, err := exec.Command(p, "--version").Output()
	if err != nil {
		testenv.SkipUnlessAllowed(t, "Codex CLI not installed at "+p+" (run make codex)")
	}
	if got := strings.TrimSpace(string(out)); got != "codex-cli "+codexVersion {
		t.Fatalf("%s is %q; the tests are pinned to %s", p, got, codexVersion)
	}
	return p
}

// codexPane is a Codex TUI in a pane of a private tmux server, with its own
// CODEX_HOME, talking to a fake Responses API.
type codexPane struct {
	tmux      *tmux.Server
	pane      string
	codexHome string
}

// startCodex writes a CODEX_HOME whose config points Codex at fake (a
// custom provider: no login screen) and trusts dir (no folder dialog), then
// starts the TUI with --no-daemon (no shared app-server daemon; hooks get
// the pane's environment) and waits until it is ready for a prompt.
func startCodex(t *testing.T, fake *fakeresponses.Server, dir string) *codexPane {
	t.Helper()
	bin := codexBinary(t)
	srv := tmuxtest.New(t)
	dir, _ = filepath.EvalSymlinks(dir)
	codexHome, home := t.TempDir(), t.TempDir()
	config := fmt.Sprintf(`model = "gpt-fake"
model_provider = "fake"
approval_policy = "on-request"
sandbox_mode = "workspace-write"

[model_providers.fake]
name = "Fake"
base_url = %q
env_key = %q
wire_api = "responses"

[projects.%q]
trust_level = "trusted"
`, fake.URL+"/v1", codexKeyEnv, dir)
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	pane, err := srv.NewPane(context.Background(), tmux.PaneSpec{Session: "codex", Window: "codex", Dir: dir,
		Env:  map[string]string{"HOME": home, "CODEX_HOME": codexHome, codexKeyEnv: "sk-test-fake-0123456789", "TERM": "tmux-256color"},
		Argv: []string{bin, "--no-daemon"}, Width: 160, Height: 50})
	if err != nil {
		t.Fatal(err)
	}
	c := &codexPane{tmux: srv, pane: pane, codexHome: codexHome}
	// Registered after the temp dirs, so it runs before they are removed.
	t.Cleanup(c.stop)
	c.waitIdle(t, 60*time.Second)
	t.Logf("Codex ready %v after start", time.Since(start).Round(time.Millisecond))
	return c
}

// stop kills the pane and waits for Codex to exit.
func (c *codexPane) stop() {
	ctx := context.Background()
	pid := 0
	if panes, err := c.tmux.ListPanes(ctx); err == nil {
		for _, p := range panes {
			if p.ID == c.pane {
				pid = p.PID
			}
		}
	}
	_ = c.tmux.KillPane(ctx, c.pane)
	for deadline := time.Now().Add(10 * time.Second); pid > 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
	}
}

func (c *codexPane) screen() string {
	s, _ := c.tmux.Capture(context.Background(), c.pane, 0)
	return s
}

// waitIdle waits for the footer (model · cwd) with no turn running.
func (c *codexPane) waitIdle(t *testing.T, timeout time.Duration) {
	t.Helper()
	var screen string
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		screen = c.screen()
		if strings.Contains(screen, "gpt-fake default") && !strings.Contains(screen, "esc to interrupt") {
			return
		}
	}
	t.Fatalf("Codex never became idle; screen:\n%s", screen)
}

// say types text into the composer and submits it. Codex's paste-burst
// heuristic can swallow an Enter that follows typed text at once
// (agents.md §1.4): Enter is pressed once the text is on screen, and again
// if the model has not been asked after a while.
func (c *codexPane) say(t *testing.T, fake *fakeresponses.Server, text string) {
	t.Helper()
	before := len(fake.Requests())
	if err := c.tmux.PasteTextIf(context.Background(), c.pane, tmux.Guard{}, text); err != nil {
		t.Fatal(err)
	}
	tmuxtest.WaitScreen(t, c.tmux, c.pane, text, 10*time.Second)
	for try := 0; try < 3; try++ {
		if try > 0 {
			t.Logf("Enter swallowed; pressing it again (%d)", try)
		}
		if err := c.tmux.SendKeys(context.Background(), c.pane, tmux.KeyEnter); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if len(fake.Requests()) > before {
				return
			}
		}
	}
	t.Fatalf("the prompt %q never reached the model; screen:\n%s", text, c.screen())
}

// pressKey presses one key by its tmux name; tmux.SendKeys allows only the
// keys ccbridge itself presses, and the dialog's own letters are not among
// them yet.
func (c *codexPane) pressKey(t *testing.T, key string) {
	t.Helper()
	args := append(c.tmux.SocketArgs(), "send-keys", "-t", c.pane, key)
	if out, err := exec.Command("tmux", args...).CombinedOutput(); err != nil {
		t.Fatalf("tmux send-keys %s: %v: %s", key, err, out)
	}
}

// rolloutLine is one line of Codex's transcript (agents.md §1.5).
type rolloutLine struct {
	Type    string         `json:"type"`
	Payload map[string]any `json:"payload"`
}

// rollout reads the session's transcript: the one rollout file under
// CODEX_HOME/sessions.
func (c *codexPane) rollout(t *testing.T) []rolloutLine {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(c.codexHome, "sessions", "*", "*", "*", "rollout-*.jsonl"))
	if len(files) != 1 {
		return nil
	}
	f, err := os.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []rolloutLine
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var l rolloutLine
		// The last line may be half written.
		if json.Unmarshal(sc.Bytes(), &l) == nil {
			lines = append(lines, l)
		}
	}
	return lines
}

// events returns the rollout's event_msg payloads of type typ.
func events(lines []rolloutLine, typ string) []map[string]any {
	var out []map[string]any
	for _, l := range lines {
		if l.Type == "event_msg" && l.Payload["type"] == typ {
			out = append(out, l.Payload)
		}
	}
	return out
}

// waitTurns waits until the rollout records n finished turns and returns
// the last task_complete.
func (c *codexPane) waitTurns(t *testing.T, n int, timeout time.Duration) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if done := events(c.rollout(t), "task_complete"); len(done) >= n {
			return done[n-1]
		}
	}
	t.Fatalf("Codex never finished turn %d; screen:\n%s", n, c.screen())
	return nil
}

// A scripted text turn reaches the real Codex CLI: the reply is on the
// screen and in the rollout, the fake saw the typed prompt (and the title
// request Codex sends beside the first turn), and the usage it reported is
// the rollout's token_count. Then an API error: Codex shows the error body
// and the rollout's task_complete carries it (no hook fires for it).
func TestCodexFakeTextTurn(t *testing.T) {
	t.Parallel()
	fake := fakeresponses.New(t)
	fake.Script("SCN_CODEX_TEXT", fakeresponses.Text("Hello from the fake Responses API."))
	fake.Script("SCN_CODEX_400", fakeresponses.Error(400, "fake bad request"))
	fake.SetTitle("Greet the fake")
	fake.SetUsage(&fakeresponses.Usage{InputTokens: 4321, CachedInputTokens: 4000, OutputTokens: 55, ReasoningOutputTokens: 7})
	c := startCodex(t, fake, t.TempDir())

	sent := time.Now()
	c.say(t, fake, "hello SCN_CODEX_TEXT please")
	done := c.waitTurns(t, 1, 60*time.Second)
	t.Logf("turn done %v after Enter", time.Since(sent).Round(time.Millisecond))
	tmuxtest.WaitScreen(t, c.tmux, c.pane, "• Hello from the fake Responses API.", 10*time.Second)
	tmuxtest.WaitScreen(t, c.tmux, c.pane, "Greet the fake", 10*time.Second)

	if done["last_agent_message"] != "Hello from the fake Responses API." {
		t.Errorf("task_complete %v", done)
	}
	reqs := fake.Requests()
	if len(reqs) != 1 || reqs[0].LastUserText != "hello SCN_CODEX_TEXT please" || !reqs[0].Stream || reqs[0].Model != "gpt-fake" {
		t.Fatalf("turn requests %+v", reqs)
	}
	if got := reqs[0].Header.Get("Authorization"); got != "Bearer sk-test-fake-0123456789" {
		t.Errorf("Authorization %q", got)
	}
	if tools := strings.Join(reqs[0].ToolNames(), " "); !strings.Contains(tools, "exec_command") {
		t.Errorf("tools offered: %s", tools)
	}
	if n := len(fake.TitleRequests()); n != 1 {
		t.Errorf("%d title requests", n)
	}
	counts := events(c.rollout(t), "token_count")
	if len(counts) == 0 {
		t.Fatal("no token_count in the rollout")
	}
	info, _ := counts[len(counts)-1]["info"].(map[string]any)
	last, _ := info["last_token_usage"].(map[string]any)
	if last["input_tokens"] != float64(4321) || last["cached_input_tokens"] != float64(4000) ||
		last["output_tokens"] != float64(55) || last["reasoning_output_tokens"] != float64(7) {
		t.Errorf("token_count %v", info)
	}
	if _, err := os.Stat(filepath.Join(c.codexHome, "packages")); err == nil {
		t.Error("--no-daemon still installed the app-server daemon under CODEX_HOME")
	}

	c.waitIdle(t, 10*time.Second)
	c.say(t, fake, "now SCN_CODEX_400")
	failed := c.waitTurns(t, 2, 60*time.Second)
	tmuxtest.WaitScreen(t, c.tmux, c.pane, `■ {"error":{"code":null,"message":"fake bad request"`, 10*time.Second)
	if e, _ := failed["error"].(map[string]any); failed["last_agent_message"] != nil || !strings.Contains(fmt.Sprint(e["message"]), "fake bad request") {
		t.Errorf("task_complete after a 400: %v", failed)
	}
	if n := len(fake.Requests()); n != 2 {
		t.Errorf("%d turn requests; a 400 is not retried", n)
	}
	// Codex calls nothing but the Responses endpoint, and titles only the
	// first turn of a thread.
	for _, r := range fake.AllRequests() {
		if r.Method != "POST" || r.Path != "/v1/responses" {
			t.Errorf("Codex called %s %s", r.Method, r.Path)
		}
	}
	if n := len(fake.TitleRequests()); n != 1 {
		t.Errorf("%d title requests after two turns", n)
	}
}

// Function calls run for real: a sandboxed command with no dialog, then an
// escalated one whose approval dialog is answered with its key (y); both
// outputs go back to the model, and the file the escalated command made
// outside the workspace exists. Last, a patch run through the shell edits
// the project.
func TestCodexFakeShellTurn(t *testing.T) {
	t.Parallel()
	fake := fakeresponses.New(t)
	outside := filepath.Join(t.TempDir(), "escalated.txt")
	fake.Script("SCN_CODEX_ECHO", fakeresponses.Exec("Running echo.", "echo hi-from-codex"))
	fake.Script("SCN_CODEX_ESCALATE", fakeresponses.ExecEscalated("", "touch "+outside+" && echo touched-ok", "Create a file outside the workspace?"))
	fake.Script("SCN_CODEX_PATCH", fakeresponses.Patch("", "*** Begin Patch\n*** Add File: notes.txt\n+patched by the fake\n*** End Patch\n"))
	dir := t.TempDir()
	c := startCodex(t, fake, dir)

	sent := time.Now()
	c.say(t, fake, "run SCN_CODEX_ECHO")
	done := c.waitTurns(t, 1, 60*time.Second)
	t.Logf("turn with a command done %v after Enter", time.Since(sent).Round(time.Millisecond))
	tmuxtest.WaitScreen(t, c.tmux, c.pane, "• Ran echo hi-from-codex", 10*time.Second)
	final := fake.WaitRequest(t, time.Second, "the echo's output", func(r fakeresponses.Request) bool { return len(r.Outputs) == 1 })
	if out := final.Outputs[0].Output; !strings.Contains(out, "Process exited with code 0") || !strings.HasSuffix(out, "Output:\nhi-from-codex\n") {
		t.Errorf("function output %q", out)
	}
	if msg, _ := done["last_agent_message"].(string); !strings.HasPrefix(msg, "Done. Last tool output:") {
		t.Errorf("task_complete %v", done)
	}
	c.waitIdle(t, 10*time.Second)

	c.say(t, fake, "run SCN_CODEX_ESCALATE")
	tmuxtest.WaitScreen(t, c.tmux, c.pane, "Reason: Create a file outside the workspace?", 30*time.Second)
	tmuxtest.WaitScreen(t, c.tmux, c.pane, "1. Yes, proceed (y)", 5*time.Second)
	if _, err := os.Stat(outside); err == nil {
		t.Fatal("the command ran before it was approved")
	}
	c.pressKey(t, "y")
	c.waitTurns(t, 2, 60*time.Second)
	tmuxtest.WaitScreen(t, c.tmux, c.pane, "You approved codex to run", 10*time.Second)
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("the approved command did not run: %v", err)
	}
	fake.WaitRequest(t, time.Second, "the escalated command's output", func(r fakeresponses.Request) bool {
		return len(r.Outputs) == 1 && strings.Contains(r.Outputs[0].Output, "touched-ok")
	})
	var calls int
	for _, l := range c.rollout(t) {
		if l.Type == "response_item" && l.Payload["type"] == "function_call" && l.Payload["name"] == "exec_command" {
			calls++
		}
	}
	if calls != 2 {
		t.Errorf("rollout has %d exec_command calls, want 2", calls)
	}

	c.waitIdle(t, 10*time.Second)
	c.say(t, fake, "edit SCN_CODEX_PATCH")
	c.waitTurns(t, 3, 60*time.Second)
	if b, err := os.ReadFile(filepath.Join(dir, "notes.txt")); err != nil || string(b) != "patched by the fake\n" {
		t.Errorf("notes.txt after the patch: %q, %v", b, err)
	}
}
