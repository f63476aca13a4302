package session

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/agent/codex"
	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/tmux"
)

const (
	codexIdle     = "  >_ OpenAI Codex (v0.171.0)\n\n› Ask Codex to do anything\n  gpt-fake default · /p\n  ← for agents · ? for shortcuts\n"
	codexApproval = "  Would you like to run the following command?\n  $ touch x\n› 1. Yes, proceed (y)\n  2. Yes, and don't ask again (p)\n  3. No, and tell Codex what to do differently (esc)\n  Press enter to confirm or esc to cancel\n"
)

// newCodexManager is newManager with the project's agent set to Codex.
func newCodexManager(t *testing.T) (*Manager, *fakePanes, Target) {
	t.Helper()
	m, panes, _, target := newManager(t)
	cfg := *m.config()
	cfg.Codex = config.Codex{Command: "/opt/codex", Args: []string{"--profile", "w"}, Env: map[string]string{"CODEX_HOME": "/home/u/.codex-work"}}
	cfg.Servers = slices.Clone(cfg.Servers)
	cfg.Servers[0].Projects = slices.Clone(cfg.Servers[0].Projects)
	cfg.Servers[0].Projects[0].Agent = config.AgentCodex
	m.Reconfigure(&cfg)
	panes.screen = codexIdle
	target, err := ProjectTarget(&cfg, cfg.Servers[0], cfg.Servers[0].Projects[0])
	if err != nil {
		t.Fatal(err)
	}
	return m, panes, target
}

// A Codex project's session runs [codex].command with its args and env,
// the hooks on its command line and no Claude flag; it is ready once the
// composer shows, and its record names the agent.
func TestEnsureStartsCodexForACodexProject(t *testing.T) {
	m, panes, target := newCodexManager(t)
	if target.Agent != config.AgentCodex {
		t.Fatalf("target agent %q", target.Agent)
	}
	if _, started, err := m.Ensure(context.Background(), target); err != nil || !started {
		t.Fatalf("Ensure: %v, %v", started, err)
	}
	spec := panes.specs[0]
	argv := strings.Join(spec.Argv, " ")
	if !strings.HasPrefix(argv, "/opt/codex --profile w --no-daemon --dangerously-bypass-hook-trust -c hooks.") ||
		!strings.Contains(argv, "'/bin/hs' --agent=codex '--rules=") || !strings.HasSuffix(argv, "--model sonnet") {
		t.Errorf("argv %q", spec.Argv)
	}
	for _, claudeOnly := range []string{"--settings", "--permission-mode", "--append-system-prompt", "/opt/claude"} {
		if slices.Contains(spec.Argv, claudeOnly) {
			t.Errorf("a Claude flag in Codex's argv: %s", claudeOnly)
		}
	}
	if spec.Env["CODEX_HOME"] != "/home/u/.codex-work" || spec.Env["CCBRIDGE_SESSION"] != "home-api" || spec.Env["ANTHROPIC_BASE_URL"] != "" {
		t.Errorf("env %v", spec.Env)
	}
	rec, _ := m.opt.Store.Sessions.Get("home-api")
	if rec.Agent != config.AgentCodex || rec.PermissionMode != "" {
		t.Errorf("record %+v", rec)
	}
}

// A missing codex command is named at start, by its key.
func TestEnsureNamesAMissingCodexCommand(t *testing.T) {
	m, panes, target := newCodexManager(t)
	m.opt.FindProgram = func(name, _ string) error {
		if name == "/opt/codex" {
			return errors.New("not an executable file")
		}
		return nil
	}
	_, _, err := m.Ensure(context.Background(), target)
	var ce *CommandError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "[codex].command") || !strings.Contains(err.Error(), "Codex CLI") {
		t.Fatalf("err = %v", err)
	}
	if len(panes.specs) != 0 {
		t.Error("a pane was started")
	}
}

// Text goes into Codex's composer, never into its approval dialog (whose
// Enter would approve the command), and Enter follows once it shows.
func TestDeliverToCodex(t *testing.T) {
	m, panes, target := newCodexManager(t)
	ctx := context.Background()
	if _, _, err := m.Ensure(ctx, target); err != nil {
		t.Fatal(err)
	}
	panes.takeOps()
	panes.screen = codexApproval
	if _, err := m.Deliver(ctx, target.Key, "hello"); !errors.Is(err, ErrDialogOpen) {
		t.Fatalf("Deliver into a dialog: %v", err)
	}
	if ops := panes.takeOps(); len(ops) != 0 {
		t.Errorf("sent into the dialog: %q", ops)
	}
	panes.screen = codexIdle
	panes.onPaste = func(f *fakePanes, text string) {
		f.screen = strings.Replace(codexIdle, "Ask Codex to do anything", text, 1)
	}
	if _, err := m.Deliver(ctx, target.Key, "run the tests"); err != nil {
		t.Fatal(err)
	}
	ops := panes.takeOps()
	if len(ops) != 3 || ops[1] != "paste %1 run the tests" || ops[2] != "keys %1 "+string(tmux.KeyEnter) {
		t.Errorf("ops %q", ops)
	}
}

// /status reads a Codex pane by Codex's screen: idle at its composer,
// waiting on a prompt while its approval dialog is up.
func TestStatusOfACodexPane(t *testing.T) {
	m, panes, target := newCodexManager(t)
	ctx := context.Background()
	if _, _, err := m.Ensure(ctx, target); err != nil {
		t.Fatal(err)
	}
	if st, err := m.Status(ctx, target.Key); err != nil || st.State != "idle" || st.AgentName != config.AgentCodex {
		t.Errorf("idle: %+v %q, %v", st.State, st.AgentName, err)
	}
	panes.screen = codexApproval
	if st, err := m.Status(ctx, target.Key); err != nil || st.State != "waiting on a prompt" {
		t.Errorf("approval: %+v, %v", st.State, err)
	}
}

// /mode and /model drive Claude's own keys and slash command; in Codex
// they would toggle Plan mode or open a picker. They are refused, with
// nothing typed.
func TestModeAndModelAreRefusedForCodex(t *testing.T) {
	m, panes, target := newCodexManager(t)
	ctx := context.Background()
	if _, _, err := m.Ensure(ctx, target); err != nil {
		t.Fatal(err)
	}
	panes.takeOps()
	if err := m.SetMode(ctx, target.Key, "plan"); !errors.Is(err, ErrNotWithAgent) || !strings.Contains(err.Error(), "Codex") {
		t.Errorf("SetMode: %v", err)
	}
	if err := m.SetModel(ctx, target.Key, "gpt-x"); !errors.Is(err, ErrNotWithAgent) {
		t.Errorf("SetModel: %v", err)
	}
	if ops := panes.takeOps(); len(ops) != 0 {
		t.Errorf("typed into Codex: %q", ops)
	}
}

// A thread of a Codex project runs Codex too.
func TestThreadsOfACodexProjectRunCodex(t *testing.T) {
	m, _, _ := newCodexManager(t)
	cfg := m.config()
	th, err := ThreadTarget(cfg, cfg.Servers[0], cfg.Servers[0].Projects[0], "100000000000000009", state.Registered{})
	if err != nil || th.Agent != config.AgentCodex {
		t.Fatalf("thread target %+v, %v", th, err)
	}
}

// Codex's dialogs at start read as dialogs no hook reports: the text from
// the top (or the last conversation item), the numbered choices, the
// highlighted one; its command approval is its card's.
func TestCodexDialogs(t *testing.T) {
	cx := codex.Codex{}
	trust := "  Folder access\n  /home/u/proj\n  Trust this folder? Codex can read, edit, and run files here.\n\n" +
		"› 1. Trust and continue\n  2. Back to Agent Command Center\n  enter continue · esc back\n"
	d, ok := parseDialog(trust, cx)
	if !ok || d.Selected != 0 || !slices.Equal(d.Choices, []string{"1. Trust and continue", "2. Back to Agent Command Center"}) ||
		!strings.HasPrefix(d.Text, "Folder access\n/home/u/proj\nTrust this folder?") || hookDialog(d) {
		t.Errorf("trust: %+v, %v", d, ok)
	}
	moved, _ := parseDialog(strings.Replace(strings.Replace(trust, "› 1.", "  1.", 1), "  2. Back", "› 2. Back", 1), cx)
	if moved.Hash != d.Hash || moved.Selected != 1 {
		t.Errorf("the highlight moved: %+v", moved)
	}
	approval := "› run it\n\n• Running touch x\n" + codexApproval
	if d, ok := parseDialog(approval, cx); !ok || !hookDialog(d) || strings.Contains(d.Text, "run it") {
		t.Errorf("approval: %+v, %v", d, ok)
	}
	if _, ok := parseDialog(codexIdle, cx); ok {
		t.Error("the composer read as a dialog")
	}
}

// A pane whose record cannot be read is of no known agent: ccbridge
// refuses to drive it rather than take Claude's screen and guard, which
// would let an Enter approve Codex's "1. Yes, proceed".
func TestAgentOfUnreadableRecordFailsClosed(t *testing.T) {
	m, _, target := newCodexManager(t)
	ctx := context.Background()
	if _, _, err := m.Ensure(ctx, target); err != nil {
		t.Fatal(err)
	}
	if a, err := m.agentOf(target.Key); err != nil || a.Name() != config.AgentCodex {
		t.Fatalf("agentOf: %v, %v", a, err)
	}
	rec := filepath.Join(m.opt.Store.Dir.Root(), "sessions", target.Key+".json")
	if err := os.WriteFile(rec, []byte("not a record"), 0o600); err != nil {
		t.Fatal(err)
	}
	if a, err := m.agentOf(target.Key); err == nil {
		t.Fatalf("agentOf of an unreadable record: %s, no error", a.Name())
	}
	if err := m.claudeOnly(target.Key, "the mode"); err == nil {
		t.Error("claudeOnly allowed a session of unknown agent")
	}
}

// A Codex session has no Claude Code deny rules: its hooks get
// ccbridge's own files on their command line, which the policy hook
// refuses every call that names (internal/hook), and a Claude session's
// stay as they were (its deny rules hold in Claude's own process).
func TestCodexHooksGetCcbridgesOwnFiles(t *testing.T) {
	m, panes, target := newCodexManager(t)
	if _, _, err := m.Ensure(context.Background(), target); err != nil {
		t.Fatal(err)
	}
	argv := strings.Join(panes.specs[0].Argv, " ")
	bots := filepath.Join(m.opt.Store.Dir.Root(), "bots") + "/"
	if !strings.Contains(argv, `\"protect\":[`) || !strings.Contains(argv, bots) {
		t.Errorf("no protect list with %s in %q", bots, argv)
	}
}

// A session's status names its agent as the config does: a record with
// none (Claude's, or a pane taken over) is Claude's; one never started is
// no agent's.
func TestStatusNamesTheAgent(t *testing.T) {
	m, _, _, target := newManager(t)
	ctx := context.Background()
	if st, err := m.Status(ctx, target.Key); err != nil || st.AgentName != "" {
		t.Errorf("never started: %q, %v", st.AgentName, err)
	}
	if _, _, err := m.Ensure(ctx, target); err != nil {
		t.Fatal(err)
	}
	if st, err := m.Status(ctx, target.Key); err != nil || st.AgentName != config.AgentClaude {
		t.Errorf("Claude's: %q, %v", st.AgentName, err)
	}
}

// Claude Code's flags a front end adds (an MCP client's allowedTools,
// disallowedTools, appendSystemPrompt) are refused for Codex, naming them,
// and nothing starts: a restriction asked for is never silently dropped.
func TestCodexRefusesClaudeFlags(t *testing.T) {
	m, panes, target := newCodexManager(t)
	target.Args = []string{"--disallowedTools", "Bash", "--append-system-prompt", "be brief"}
	_, _, err := m.Ensure(context.Background(), target)
	if !errors.Is(err, ErrNotWithAgent) || !strings.Contains(err.Error(), "--disallowedTools, --append-system-prompt") || strings.Contains(err.Error(), "be brief") {
		t.Errorf("Ensure: %v", err)
	}
	if len(panes.specs) != 0 {
		t.Errorf("a pane started: %+v", panes.specs)
	}
}
