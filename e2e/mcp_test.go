//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ccbridge/ccbridge/internal/execx"
	"github.com/ccbridge/ccbridge/internal/testutil/claudetest"
	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
	"github.com/ccbridge/ccbridge/internal/testutil/fakemodel"
	"github.com/ccbridge/ccbridge/internal/testutil/testenv"
	"github.com/ccbridge/ccbridge/internal/tmux"
)

// mcpEnv is `ccbridge mcp` run by the SDK's own client over stdio, with
// the real Claude Code CLI against the fake model in a private tmux server.
type mcpEnv struct {
	t       *testing.T
	model   *fakemodel.Server
	tmux    *tmux.Server
	socket  string
	home    string // Claude's HOME
	dir     string // a trusted project directory
	cfg     string
	runtime string
	env     []string
	cs      *sdk.ClientSession
	cmd     *exec.Cmd // the running `ccbridge mcp`
}

// newMCP configures [claude] and [tmux] only (no Discord) and connects a
// client; opt (may be nil) sets its options, e.g. an elicitation handler.
func newMCP(t *testing.T, opt *sdk.ClientOptions) *mcpEnv {
	t.Helper()
	claude := claudetest.Binary(t)
	e := &mcpEnv{t: t, model: fakemodel.New(t)}
	e.socket = fmt.Sprintf("ccbmcp-%d-%d", os.Getpid(), socketSeq.Add(1))
	e.tmux = tmux.New(execx.Exec{}, tmux.Options{Socket: e.socket})
	base := settledTempDir(t)
	e.dir = filepath.Join(base, "proj")
	if err := os.MkdirAll(e.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	e.home = claudeHomeIn(t, base, e.dir)
	// Registered last, run first: Claude is gone before its dirs are removed.
	t.Cleanup(func() { _ = e.tmux.KillServer(context.Background()) })
	var env []string
	for k, v := range claudetest.Env(e.home, e.model.URL) {
		env = append(env, fmt.Sprintf("%s = %q", k, v))
	}
	cfg := fmt.Sprintf("[tmux]\nsocket = %q\n[claude]\ncommand = %q\nenv = { %s }\n", e.socket, claude, strings.Join(env, ", "))
	e.cfg = filepath.Join(base, "config.toml")
	if err := os.WriteFile(e.cfg, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	e.runtime = filepath.Join(base, "rt")
	e.env = []string{"XDG_STATE_HOME=" + filepath.Join(base, "state")}
	e.connect(opt)
	return e
}

// mcpWithBridge runs `ccbridge mcp` on the daemon's config and runtime dir.
func mcpWithBridge(t *testing.T, b *bridge, opt *sdk.ClientOptions) *mcpEnv {
	t.Helper()
	e := &mcpEnv{t: t, model: b.model, tmux: b.tmux, socket: b.socket, dir: b.projects[0].dir, cfg: b.cfg, runtime: b.runtime,
		env: append([]string{"XDG_STATE_HOME=" + b.stateDir}, b.env...)}
	e.connect(opt)
	return e
}

func (e *mcpEnv) connect(opt *sdk.ClientOptions) {
	e.t.Helper()
	cmd := exec.Command(bins.bridge, "mcp", "--config", e.cfg)
	cmd.Env = append(append(os.Environ(), "CCBRIDGE_RUNTIME_DIR="+e.runtime), e.env...)
	stderr := &testenv.SyncBuffer{}
	cmd.Stderr = stderr
	client := sdk.NewClient(&sdk.Implementation{Name: "e2e", Version: "1"}, opt)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		e.t.Fatalf("connect: %v\nstderr: %s", err, stderr.String())
	}
	e.cs, e.cmd = cs, cmd
	e.t.Cleanup(func() {
		_ = cs.Close()
		if e.t.Failed() {
			e.t.Logf("ccbridge mcp stderr:\n%s", stderr.String())
			for _, f := range []string{"mcp.log", "hook.log"} {
				if log, err := os.ReadFile(filepath.Join(e.runtime, "logs", f)); err == nil {
					e.t.Logf("%s:\n%s", f, log)
				}
			}
			panes, _ := e.tmux.ListPanes(context.Background())
			for _, p := range panes {
				if screen, err := e.tmux.Capture(context.Background(), p.ID, 0); err == nil {
					e.t.Logf("screen of %s (%s):\n%s", p.ID, p.Window, strings.TrimRight(screen, "\n "))
				}
			}
		}
	})
}

// call calls a tool; a tool error is returned as err.
func (e *mcpEnv) call(name string, args map[string]any, out any) error {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), long)
	defer cancel()
	res, err := e.cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		e.t.Fatalf("%s: protocol error: %v", name, err)
	}
	if res.IsError {
		var texts []string
		for _, c := range res.Content {
			if tc, ok := c.(*sdk.TextContent); ok {
				texts = append(texts, tc.Text)
			}
		}
		return fmt.Errorf("%s", strings.Join(texts, "\n"))
	}
	if out != nil {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, out); err != nil {
			e.t.Fatalf("%s: structured content %s: %v", name, b, err)
		}
	}
	return nil
}

func (e *mcpEnv) must(name string, args map[string]any, out any) {
	e.t.Helper()
	if err := e.call(name, args, out); err != nil {
		e.t.Fatalf("%s: %v", name, err)
	}
}

type mcpPending struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Questions []struct {
		Question string   `json:"question"`
		Options  []string `json:"options"`
	} `json:"questions"`
}

type mcpStatus struct {
	Status          string      `json:"status"`
	Result          string      `json:"result"`
	RecentOutput    []string    `json:"recentOutput"`
	PendingQuestion *mcpPending `json:"pendingQuestion"`
	ToolUseEvents   []struct {
		ToolName string `json:"toolName"`
		Status   string `json:"status"`
	} `json:"toolUseEvents"`
	TurnCount int      `json:"turnCount"`
	IsActive  bool     `json:"isActive"`
	CostUSD   *float64 `json:"costUsd"`
}

// start starts a session with prompt in the env's directory.
func (e *mcpEnv) start(prompt string, extra map[string]any) string {
	e.t.Helper()
	// Claude's own default mode (auto in 2.1.328) would ask nothing.
	args := map[string]any{"prompt": prompt, "workingDirectory": e.dir, "permissionMode": "default"}
	for k, v := range extra {
		args[k] = v
	}
	var out struct {
		SessionID string `json:"sessionId"`
		Status    string `json:"status"`
	}
	e.must("claude_start", args, &out)
	if out.SessionID == "" {
		e.t.Fatal("claude_start returned no session id")
	}
	return out.SessionID
}

// waitStatus polls claude_status until ok accepts it.
func (e *mcpEnv) waitStatus(sid, what string, ok func(mcpStatus) bool) mcpStatus {
	e.t.Helper()
	deadline := time.Now().Add(long)
	var st mcpStatus
	for time.Now().Before(deadline) {
		st = mcpStatus{}
		e.must("claude_status", map[string]any{"sessionId": sid}, &st)
		if ok(st) {
			return st
		}
		time.Sleep(200 * time.Millisecond)
	}
	e.t.Fatalf("%s: never; last status %+v", what, st)
	return st
}

func (e *mcpEnv) waitPending(sid, kind string) *mcpPending {
	e.t.Helper()
	st := e.waitStatus(sid, "a pending "+kind, func(s mcpStatus) bool {
		return s.Status == "awaiting_input" && s.PendingQuestion != nil && s.PendingQuestion.Type == kind
	})
	return st.PendingQuestion
}

func (e *mcpEnv) respond(sid, id string, answers ...string) error {
	e.t.Helper()
	return e.call("claude_respond", map[string]any{"sessionId": sid, "id": id, "answers": answers}, nil)
}

func (e *mcpEnv) waitIdle(sid, result string) mcpStatus {
	e.t.Helper()
	return e.waitStatus(sid, "idle with "+result, func(s mcpStatus) bool {
		return s.Status == "idle" && strings.Contains(s.Result, result)
	})
}

// start → a permission prompt in status → a wrong answer is a tool error →
// allow → idle with the result; answering again says it is closed.
func TestMCPAllow(t *testing.T) {
	t.Parallel()
	e := newMCP(t, nil)
	e.model.Script("SCN_MCP_TOUCH", fakemodel.Tool("", "Bash", map[string]any{"command": "touch touched.txt && echo touched-ok", "description": "Create touched.txt"}))
	sid := e.start("SCN_MCP_TOUCH", nil)
	p := e.waitPending(sid, "tool_approval")
	if len(p.Questions) != 1 || !strings.Contains(p.Questions[0].Question, "touch touched.txt") || strings.Join(p.Questions[0].Options, ",") != "allow,deny" {
		t.Fatalf("pending question = %+v", p)
	}
	if err := e.respond(sid, p.ID, "yes please"); err == nil || !strings.Contains(err.Error(), "not among the options") {
		t.Fatalf("a wrong answer: %v", err)
	}
	if err := e.respond(sid, "nope", "allow"); err == nil || !strings.Contains(err.Error(), "no pending question") {
		t.Fatalf("an unknown id: %v", err)
	}
	if err := e.respond(sid, p.ID, "allow"); err != nil {
		t.Fatal(err)
	}
	st := e.waitIdle(sid, "Done. Last tool result: touched-ok")
	if _, err := os.Stat(filepath.Join(e.dir, "touched.txt")); err != nil {
		t.Fatalf("the allowed command did not run: %v", err)
	}
	if len(st.ToolUseEvents) != 1 || st.ToolUseEvents[0].ToolName != "Bash" || st.ToolUseEvents[0].Status != "done" || st.TurnCount != 1 || !st.IsActive {
		t.Errorf("status = %+v", st)
	}
	// The cost Claude shows in its statusLine (the fake API's usage).
	e.waitStatus(sid, "the session's cost", func(s mcpStatus) bool { return s.CostUSD != nil && *s.CostUSD > 0 })
	if err := e.respond(sid, p.ID, "deny"); err == nil || !strings.Contains(err.Error(), "no longer pending") {
		t.Fatalf("a second answer: %v", err)
	}
	if err := e.call("claude_status", map[string]any{"sessionId": "no-such-session"}, nil); err == nil || !strings.Contains(err.Error(), "unknown session") {
		t.Fatalf("status of an unknown session: %v", err)
	}
}

// deny with instructions reaches the model verbatim.
func TestMCPDenyWithInstructions(t *testing.T) {
	t.Parallel()
	e := newMCP(t, nil)
	e.model.Script("SCN_MCP_DENY", fakemodel.Tool("", "Bash", map[string]any{"command": "touch denied.txt", "description": "Touch it"}))
	sid := e.start("SCN_MCP_DENY", nil)
	p := e.waitPending(sid, "tool_approval")
	if err := e.respond(sid, p.ID, "deny: use echo instead"); err != nil {
		t.Fatal(err)
	}
	r := e.model.WaitRequest(t, long, "the denial", func(r fakemodel.Request) bool { return len(r.ToolResults) == 1 })
	if got := r.ToolResults[0]; got.Content != "use echo instead" || !got.IsError {
		t.Fatalf("tool_result = %+v", got)
	}
	e.waitIdle(sid, "Done. Last tool result: use echo instead")
	if _, err := os.Stat(filepath.Join(e.dir, "denied.txt")); err == nil {
		t.Fatal("the denied command ran")
	}
}

// two AskUserQuestion questions, one multiSelect, one answered with Other.
func TestMCPQuestions(t *testing.T) {
	t.Parallel()
	e := newMCP(t, nil)
	e.model.Script("SCN_MCP_ASK", fakemodel.Tool("", "AskUserQuestion", askInput))
	sid := e.start("SCN_MCP_ASK", nil)
	p := e.waitPending(sid, "question")
	if len(p.Questions) != 2 || p.Questions[0].Question != "Which color do you prefer?" {
		t.Fatalf("pending question = %+v", p)
	}
	if err := e.respond(sid, p.ID, "Purple"); err == nil {
		t.Fatal("one answer for two questions was taken")
	}
	if err := e.respond(sid, p.ID, "Purple", "Logging, Tracing"); err != nil {
		t.Fatal(err)
	}
	r := e.model.WaitRequest(t, long, "the answers", func(r fakemodel.Request) bool { return len(r.ToolResults) == 1 })
	got := r.ToolResults[0].Content
	for _, want := range []string{`"Which color do you prefer?"="Purple"`, `"Which features do you want?"="Logging, Tracing"`} {
		if !strings.Contains(got, want) {
			t.Errorf("tool_result %q lacks %s", got, want)
		}
	}
}

// a plan approved, and one sent back with feedback.
func TestMCPPlan(t *testing.T) {
	t.Parallel()
	e := newMCP(t, nil)
	e.model.Script("SCN_MCP_PLAN_OK", planSteps...)
	e.model.Script("SCN_MCP_PLAN_KEEP", planSteps...)
	ok := e.start("SCN_MCP_PLAN_OK", map[string]any{"permissionMode": "plan"})
	keep := e.start("SCN_MCP_PLAN_KEEP", map[string]any{"permissionMode": "plan"})

	p := e.waitPending(ok, "plan_approval")
	if !strings.Contains(p.Questions[0].Question, "1. Step one: create a.txt") {
		t.Errorf("the question does not show the plan: %q", p.Questions[0].Question)
	}
	if err := e.respond(ok, p.ID, "approve"); err != nil {
		t.Fatal(err)
	}
	e.model.WaitRequest(t, long, "the approval", func(r fakemodel.Request) bool {
		return strings.Contains(r.LastUserText, "SCN_MCP_PLAN_OK") && len(r.ToolResults) == 1 && strings.Contains(r.ToolResults[0].Content, "User has approved your plan")
	})
	e.waitIdle(ok, "User has approved your plan")

	kp := e.waitPending(keep, "plan_approval")
	if err := e.respond(keep, kp.ID, "reject: add a docs step"); err != nil {
		t.Fatal(err)
	}
	e.model.WaitRequest(t, long, "the feedback", func(r fakemodel.Request) bool {
		return strings.Contains(r.LastUserText, "SCN_MCP_PLAN_KEEP") && len(r.ToolResults) == 1 && r.ToolResults[0].Content == "add a docs step"
	})
	e.waitIdle(keep, "add a docs step")
}

// interrupt stops a running turn.
func TestMCPInterrupt(t *testing.T) {
	t.Parallel()
	e := newMCP(t, nil)
	e.model.Script("SCN_MCP_SLOW", fakemodel.Step{Texts: []string{"slow answer"}, Delay: 5 * time.Minute})
	sid := e.start("SCN_MCP_SLOW", nil)
	e.waitStatus(sid, "active", func(s mcpStatus) bool { return s.Status == "active" })
	e.model.WaitRequest(t, long, "the slow prompt", func(r fakemodel.Request) bool { return strings.Contains(r.LastUserText, "SCN_MCP_SLOW") })
	e.must("claude_interrupt", map[string]any{"sessionId": sid}, nil)
	st := e.waitStatus(sid, "interrupted", func(s mcpStatus) bool { return s.Status == "interrupted" })
	if st.Result != "" {
		t.Errorf("an interrupted turn has a result: %q", st.Result)
	}
	// The session takes the next message.
	var out struct {
		Status string `json:"status"`
	}
	e.must("claude_say", map[string]any{"sessionId": sid, "message": "after the interrupt"}, &out)
	e.waitIdle(sid, "ok: after the interrupt")
	for _, line := range e.waitIdle(sid, "ok: after the interrupt").RecentOutput {
		if strings.Contains(line, "slow answer") {
			t.Fatal("the interrupted turn still answered")
		}
	}
}

// say to a session whose pane was killed resumes the same conversation.
func TestMCPResume(t *testing.T) {
	t.Parallel()
	e := newMCP(t, nil)
	sid := e.start("first message RESUME_ONE", nil)
	e.waitIdle(sid, "ok: first message RESUME_ONE")
	panes, err := e.tmux.ListPanes(context.Background())
	if err != nil || len(panes) != 1 {
		t.Fatalf("panes: %v %v", panes, err)
	}
	if err := e.tmux.KillPane(context.Background(), panes[0].ID); err != nil {
		t.Fatal(err)
	}
	e.waitStatus(sid, "not active", func(s mcpStatus) bool { return !s.IsActive })
	var out struct {
		SessionID string `json:"sessionId"`
		Resumed   bool   `json:"resumed"`
	}
	e.must("claude_say", map[string]any{"sessionId": sid, "message": "second message RESUME_TWO"}, &out)
	if !out.Resumed || out.SessionID != sid {
		t.Fatalf("claude_say = %+v", out)
	}
	r := e.model.WaitRequest(t, long, "the resumed turn", func(r fakemodel.Request) bool {
		return r.HasTools && strings.Contains(r.LastUserText, "RESUME_TWO")
	})
	if body, _ := json.Marshal(r.Body["messages"]); !strings.Contains(string(body), "RESUME_ONE") {
		t.Fatalf("the resumed conversation lacks the first message: %s", body)
	}
	e.waitIdle(sid, "ok: second message RESUME_TWO")
}

// list shows a session started by hand (no ccbridge hooks), newest first,
// and the MCP-started one as active.
func TestMCPList(t *testing.T) {
	t.Parallel()
	e := newMCP(t, nil)
	ours := e.start("started over MCP LIST_MCP", nil)
	e.waitIdle(ours, "ok: started over MCP LIST_MCP")

	env := claudetest.Env(e.home, e.model.URL)
	pane, err := e.tmux.NewPane(context.Background(), tmux.PaneSpec{Session: "by-hand", Window: "hand", Dir: e.dir, Env: env,
		Argv: []string{claudetest.Binary(t)}, Width: 100, Height: 50})
	if err != nil {
		t.Fatal(err)
	}
	waitScreen(t, e.tmux, pane, "❯")
	if err := e.tmux.PasteTextIf(context.Background(), pane, tmux.Guard{}, "typed by hand LIST_HAND"); err != nil {
		t.Fatal(err)
	}
	waitScreen(t, e.tmux, pane, "LIST_HAND")
	if err := e.tmux.SendKeys(context.Background(), pane, tmux.KeyEnter); err != nil {
		t.Fatal(err)
	}
	e.model.WaitRequest(t, long, "the hand-typed prompt", func(r fakemodel.Request) bool { return strings.Contains(r.LastUserText, "LIST_HAND") })

	type entry struct {
		SessionID        string `json:"sessionId"`
		WorkingDirectory string `json:"workingDirectory"`
		FirstPrompt      string `json:"firstPrompt"`
		IsActive         bool   `json:"isActive"`
		Status           string `json:"status"`
	}
	var list struct {
		Sessions []entry `json:"sessions"`
	}
	deadline := time.Now().Add(long)
	for {
		list.Sessions = nil
		e.must("claude_list", map[string]any{"workingDirectory": e.dir}, &list)
		if len(list.Sessions) == 2 && strings.Contains(list.Sessions[0].FirstPrompt, "LIST_HAND") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("claude_list = %+v", list.Sessions)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if got := list.Sessions[1]; got.SessionID != ours || !got.IsActive || got.Status != "idle" || !strings.Contains(got.FirstPrompt, "LIST_MCP") {
		t.Errorf("the MCP session in the list: %+v", got)
	}
	if got := list.Sessions[0]; got.IsActive || got.SessionID == ours {
		t.Errorf("the hand-started session in the list: %+v", got)
	}
	var limited struct {
		Sessions []entry `json:"sessions"`
	}
	e.must("claude_list", map[string]any{"limit": 1}, &limited)
	if len(limited.Sessions) != 1 {
		t.Errorf("limit 1 gave %d", len(limited.Sessions))
	}
}

// waitScreen waits for text on a pane's screen.
func waitScreen(t *testing.T, srv *tmux.Server, pane, want string) {
	t.Helper()
	deadline := time.Now().Add(long)
	for {
		screen, _ := srv.Capture(context.Background(), pane, 0)
		if strings.Contains(screen, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%q never on the screen:\n%s", want, screen)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// an elicitation-capable client answers a prompt; decline decides nothing.
func TestMCPElicitation(t *testing.T) {
	t.Parallel()
	seen := make(chan string, 10)
	handler := func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		seen <- req.Params.Message
		if strings.Contains(req.Params.Message, "declined.txt") {
			return &sdk.ElicitResult{Action: "decline"}, nil
		}
		return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"answer": "allow"}}, nil
	}
	e := newMCP(t, &sdk.ClientOptions{ElicitationHandler: handler})
	e.model.Script("SCN_MCP_ELICIT", fakemodel.Tool("", "Bash", map[string]any{"command": "touch elicited.txt && echo elicited-ok", "description": "Touch"}))
	e.model.Script("SCN_MCP_DECLINE", fakemodel.Tool("", "Bash", map[string]any{"command": "touch declined.txt", "description": "Touch"}))
	sid := e.start("SCN_MCP_ELICIT", nil)
	e.waitIdle(sid, "Done. Last tool result: elicited-ok")
	if _, err := os.Stat(filepath.Join(e.dir, "elicited.txt")); err != nil {
		t.Fatalf("the elicited answer did not allow the command: %v", err)
	}

	d := e.start("SCN_MCP_DECLINE", nil)
	p := e.waitPending(d, "tool_approval")
	select {
	case msg := <-drain(seen, "declined.txt"):
		_ = msg
	case <-time.After(long):
		t.Fatal("the second prompt was never elicited")
	}
	st := e.waitStatus(d, "still pending", func(s mcpStatus) bool { return s.Status == "awaiting_input" })
	if st.PendingQuestion.ID != p.ID {
		t.Fatalf("a declined elicitation changed the prompt: %+v", st.PendingQuestion)
	}
	if err := e.respond(d, p.ID, "deny"); err != nil {
		t.Fatalf("after a decline the prompt is still open for claude_respond: %v", err)
	}
}

// drain forwards the first message containing want.
func drain(in chan string, want string) chan string {
	out := make(chan string, 1)
	go func() {
		for m := range in {
			if strings.Contains(m, want) {
				out <- m
				return
			}
		}
	}()
	return out
}

// With the daemon running, a prompt of an MCP-started session in a
// configured project's directory shows its card in Discord too; the first
// answer wins and the loser is told: an MCP answer closes the card, and a
// click first makes claude_respond a tool error.
func TestMCPWithDaemon(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	proj := b.projects[0]
	e := mcpWithBridge(t, b, nil)
	e.model.Script("SCN_MCP_CARD1", fakemodel.Tool("", "Bash", map[string]any{"command": "touch card1.txt && echo card1-ok", "description": "First"}))
	e.model.Script("SCN_MCP_CARD2", fakemodel.Tool("", "Bash", map[string]any{"command": "touch card2.txt && echo card2-ok", "description": "Second"}))

	sid := e.start("SCN_MCP_CARD1", nil)
	card := b.waitCard(proj, "the card of the MCP session", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "touch card1.txt") })
	p := e.waitPending(sid, "tool_approval")
	if err := e.respond(sid, p.ID, "allow"); err != nil {
		t.Fatal(err)
	}
	done := b.waitCardText(card, "Allowed** by an MCP client")
	if len(done.CustomIDs()) != 0 {
		t.Errorf("buttons left on the card answered over MCP: %q", done.CustomIDs())
	}
	e.waitIdle(sid, "Done. Last tool result: card1-ok")
	old := b.srv.ClickStale(card.ID, action(t, card, "deny"), b.owner)
	if r := b.srv.WaitResponse(old, 5*time.Second); !strings.Contains(string(r.Response), "Already answered") {
		t.Fatalf("a click after the MCP answer: %s", r.Response)
	}

	e.must("claude_say", map[string]any{"sessionId": sid, "message": "SCN_MCP_CARD2"}, nil)
	card2 := b.waitCard(proj, "the second card", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "touch card2.txt") })
	p2 := e.waitPending(sid, "tool_approval")
	b.srv.Click(card2.ID, action(t, card2, "deny"), b.owner)
	b.waitCardText(card2, "Denied** by")
	if err := e.respond(sid, p2.ID, "allow"); err == nil || !strings.Contains(err.Error(), "no longer pending") || !strings.Contains(err.Error(), "Denied") {
		t.Fatalf("an MCP answer after the click: %v", err)
	}
	e.waitIdle(sid, "Done. Last tool result: "+"The user denied")
	if _, err := os.Stat(filepath.Join(proj.dir, "card2.txt")); err == nil {
		t.Fatal("the denied command ran")
	}
}

// `ccbridge mcp` alone, with no config file anywhere, is a complete server:
// its tools are listed, claude_list reads an empty history, and mistakes
// are tool errors.
func TestMCPNoConfig(t *testing.T) {
	t.Parallel()
	base := settledTempDir(t)
	home := filepath.Join(base, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CCBRIDGE_") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "XDG_") && !strings.HasPrefix(kv, "CLAUDE_CONFIG_DIR=") {
			env = append(env, kv)
		}
	}
	cmd := exec.Command(bins.bridge, "mcp")
	cmd.Env = append(env, "HOME="+home, "CCBRIDGE_RUNTIME_DIR="+filepath.Join(base, "rt"), "XDG_STATE_HOME="+filepath.Join(base, "state"))
	stderr := &testenv.SyncBuffer{}
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "e2e", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\nstderr: %s", err, stderr.String())
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		if tool.InputSchema == nil || tool.OutputSchema == nil {
			t.Errorf("%s lacks a schema", tool.Name)
		}
	}
	if got := strings.Join(names, ","); got != "claude_interrupt,claude_list,claude_respond,claude_say,claude_start,claude_status" {
		t.Fatalf("tools = %s", got)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "claude_list", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("claude_list: %v %+v", err, res)
	}
	if b, _ := json.Marshal(res.StructuredContent); string(b) != `{"sessions":[]}` {
		t.Fatalf("claude_list of an empty history = %s", b)
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "claude_start", Arguments: map[string]any{"prompt": "hi", "workingDirectory": filepath.Join(base, "missing")}})
	if err != nil || !res.IsError {
		t.Fatalf("claude_start in a missing directory: %v %+v", err, res)
	}
	if _, err := os.Stat(filepath.Join(base, "rt", "logs", "mcp.log")); err != nil {
		t.Errorf("no mcp.log in the runtime dir: %v", err)
	}
}

// worktree: the session runs in a git worktree of its own, created as a
// thread's is.
func TestMCPWorktree(t *testing.T) {
	t.Parallel()
	e := newMCP(t, nil)
	gitRepo(t, e.dir)
	sid := e.start("in a worktree WT_ONE", map[string]any{"worktree": "feature x"})
	var st struct {
		Status           string `json:"status"`
		Result           string `json:"result"`
		WorkingDirectory string `json:"workingDirectory"`
	}
	deadline := time.Now().Add(long)
	for st.Result == "" && time.Now().Before(deadline) {
		e.must("claude_status", map[string]any{"sessionId": sid}, &st)
		time.Sleep(200 * time.Millisecond)
	}
	if st.Result != "ok: in a worktree WT_ONE" {
		t.Fatalf("status = %+v", st)
	}
	if st.WorkingDirectory == e.dir || !strings.HasPrefix(st.WorkingDirectory, e.dir) {
		t.Fatalf("working directory %q is not a worktree of %s", st.WorkingDirectory, e.dir)
	}
	out, err := exec.Command("git", "-C", e.dir, "worktree", "list", "--porcelain").Output()
	if err != nil || !strings.Contains(string(out), "worktree "+st.WorkingDirectory+"\n") {
		t.Fatalf("git worktree list: %s %v", out, err)
	}
}

// interrupt right after the start: the hooks report the turn before the
// screen shows it, and an Escape pressed in between interrupted nothing.
func TestMCPInterruptRightAway(t *testing.T) {
	t.Parallel()
	e := newMCP(t, nil)
	e.model.Script("SCN_MCP_SLOW2", fakemodel.Step{Texts: []string{"slow answer"}, Delay: 5 * time.Minute})
	sid := e.start("SCN_MCP_SLOW2", nil)
	e.waitStatus(sid, "active", func(s mcpStatus) bool { return s.Status == "active" })
	e.must("claude_interrupt", map[string]any{"sessionId": sid}, nil)
	e.must("claude_say", map[string]any{"sessionId": sid, "message": "after the interrupt"}, nil)
	e.waitIdle(sid, "ok: after the interrupt")
}

// claude_say while a tool runs goes in at once: Claude Code hands it to the
// model beside the tool's result, within the running turn, and the turn's
// reply answers it.
func TestMCPSayWhileAToolRuns(t *testing.T) {
	t.Parallel()
	e := newMCP(t, nil)
	e.model.Script("SCN_MCP_MIDTURN", fakemodel.Tool("", "Bash", map[string]any{"command": "touch started && sleep 3 && echo slept", "description": "Sleep"}))
	sid := e.start("SCN_MCP_MIDTURN", map[string]any{"allowedTools": []string{"Bash"}})
	deadline := time.Now().Add(long)
	for {
		if _, err := os.Stat(filepath.Join(e.dir, "started")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the Bash tool never started")
		}
		time.Sleep(50 * time.Millisecond)
	}
	var out struct {
		Queued bool `json:"queued"`
	}
	e.must("claude_say", map[string]any{"sessionId": sid, "message": "also MIDTURN_MSG"}, &out)
	if out.Queued {
		t.Fatalf("a message sent while a tool ran was held back: %+v", out)
	}
	e.model.WaitRequest(t, long, "the message beside the tool result", func(r fakemodel.Request) bool {
		return r.MidTurn == "also MIDTURN_MSG" && len(r.ToolResults) == 1 && r.ToolResults[0].Content == "slept"
	})
	st := e.waitIdle(sid, "ok: also MIDTURN_MSG")
	if !strings.Contains(st.Result, "Done. Last tool result: slept") {
		t.Fatalf("the reply is not the running turn's: %+v", st)
	}
}

// claude_say while a prompt is open waits, and goes in once it is answered,
// as a Discord message does. Claude then either absorbs it into the turn
// (while the allowed command still runs) or runs it as the next turn: the
// model sees it either way, and answers it.
func TestMCPSayQueuedWhileDialogOpen(t *testing.T) {
	t.Parallel()
	e := newMCP(t, nil)
	e.model.Script("SCN_MCP_QUEUE", fakemodel.Tool("", "Bash", map[string]any{"command": "touch q.txt && echo q-ok", "description": "Touch"}))
	sid := e.start("SCN_MCP_QUEUE", nil)
	p := e.waitPending(sid, "tool_approval")
	// The request is recorded a moment before the dialog is drawn; a
	// message sent in between is queued by Claude itself.
	panes, err := e.tmux.ListPanes(context.Background())
	if err != nil || len(panes) != 1 {
		t.Fatalf("panes: %v %v", panes, err)
	}
	waitScreen(t, e.tmux, panes[0].ID, "Do you want to proceed?")
	var out struct {
		Queued bool `json:"queued"`
	}
	e.must("claude_say", map[string]any{"sessionId": sid, "message": "queued message QMSG"}, &out)
	if !out.Queued {
		t.Fatalf("claude_say into an open dialog was not queued: %+v", out)
	}
	if st := e.waitPending(sid, "tool_approval"); st.ID != p.ID {
		t.Fatalf("the queued message changed the prompt: %+v", st)
	}
	if err := e.respond(sid, p.ID, "allow"); err != nil {
		t.Fatal(err)
	}
	e.waitIdle(sid, "ok: queued message QMSG")
	if _, err := os.Stat(filepath.Join(e.dir, "q.txt")); err != nil {
		t.Fatalf("the allowed command did not run: %v", err)
	}
}

// claude_say with permissionMode switches the mode first: a Write that
// would ask in default mode runs in acceptEdits.
func TestMCPSayWithMode(t *testing.T) {
	t.Parallel()
	e := newMCP(t, nil)
	sid := e.start("hello MODE_ONE", nil)
	e.waitIdle(sid, "ok: hello MODE_ONE")
	e.model.Script("SCN_MCP_WRITE", fakemodel.Tool("", "Write", map[string]any{"file_path": filepath.Join(e.dir, "w.txt"), "content": "written\n"}))
	e.must("claude_say", map[string]any{"sessionId": sid, "message": "SCN_MCP_WRITE", "permissionMode": "acceptEdits"}, nil)
	st := e.waitStatus(sid, "the write done", func(s mcpStatus) bool {
		return s.PendingQuestion != nil || (s.Status == "idle" && strings.Contains(s.Result, "Done. Last tool result"))
	})
	if st.PendingQuestion != nil {
		t.Fatalf("the Write asked in acceptEdits mode: %+v", st.PendingQuestion)
	}
	if b, err := os.ReadFile(filepath.Join(e.dir, "w.txt")); err != nil || string(b) != "written\n" {
		t.Fatalf("w.txt: %q %v", b, err)
	}
}

// An API error ends the turn with StopFailure: status error, with the
// error as the result.
func TestMCPStatusError(t *testing.T) {
	t.Parallel()
	e := newMCP(t, nil)
	e.model.Script("SCN_MCP_ERR", fakemodel.Step{Status: 400, ErrMsg: "fake bad request"})
	sid := e.start("SCN_MCP_ERR", nil)
	st := e.waitStatus(sid, "error", func(s mcpStatus) bool { return s.Status == "error" })
	if !strings.Contains(st.Result, "fake bad request") {
		t.Errorf("result = %q", st.Result)
	}
}
