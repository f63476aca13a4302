//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/testutil/claudetest"
	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
	"github.com/ccbridge/ccbridge/internal/testutil/fakemodel"
	"github.com/ccbridge/ccbridge/internal/testutil/fakeresponses"
)

// newCodexBridge starts one daemon serving two projects of one bot: a
// Claude project (projects[0], the real Claude Code on fakemodel) and a
// Codex project (projects[1], agent = "codex": the real Codex CLI on the
// returned fake Responses API). The Codex home is the user's own, as
// [codex].env points the panes at it: a custom model provider (no login
// screen) and the project's folder trusted, as a person who ran Codex
// there once has it. ccbridge adds nothing to it.
func newCodexBridge(t testing.TB) (*bridge, *fakeresponses.Server) {
	t.Helper()
	claude, codex := claudetest.Binary(t), codexBinary(t)
	b := &bridge{t: t, srv: fakediscord.New(t), model: fakemodel.New(t)}
	fake := fakeresponses.New(t)
	b.owner = b.srv.NewUser("owner")
	base := b.newTmux()
	bot := b.srv.Main()
	b.env = append(b.env, "CCBRIDGE_E2E_TOKEN_0="+bot.Token)
	var dirs []string
	for j, name := range []string{"claude", "codex"} {
		p := &project{bot: bot, name: name, dir: filepath.Join(base, name+"-proj"), channel: bot.ChannelID, key: bot.Name + "-" + name}
		if j > 0 {
			p.channel = b.srv.AddChannel(bot.GuildID, name)
			p.speaker = "Codex"
		}
		if err := os.MkdirAll(p.dir, 0o755); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, p.dir)
		b.projects = append(b.projects, p)
	}
	codexDir, _ := filepath.EvalSymlinks(b.projects[1].dir)
	codexHome, codexUserHome := filepath.Join(base, "codex-home"), filepath.Join(base, "codex-user")
	for _, d := range []string{codexHome, codexUserHome} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	userConfig := fmt.Sprintf("model = \"gpt-fake\"\nmodel_provider = \"fake\"\napproval_policy = \"on-request\"\nsandbox_mode = \"workspace-write\"\n\n"+
		"[model_providers.fake]\nname = \"Fake\"\nbase_url = %q\nenv_key = %q\nwire_api = \"responses\"\n\n[projects.%q]\ntrust_level = \"trusted\"\n",
		fake.URL+"/v1", codexKeyEnv, codexDir)
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(userConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	home := claudeHomeIn(t, base, dirs...)
	var env []string
	for k, v := range claudetest.Env(home, b.model.URL) {
		env = append(env, fmt.Sprintf("%s = %q", k, v))
	}
	cfg := fmt.Sprintf(`[discord]
api_base = %q
[tmux]
socket = %q
[claude]
command = %q
permission_mode = "default"
env = { %s }
[codex]
command = %q
env = { HOME = %q, CODEX_HOME = %q, %s = "sk-test-fake-0123456789", TERM = "tmux-256color" }
[[servers]]
name = %q
token_env = "CCBRIDGE_E2E_TOKEN_0"
guild_id = %q
owner_ids = [%q]
  [[servers.projects]]
  name = "claude"
  channel_id = %q
  path = %q
  [[servers.projects]]
  name = "codex"
  channel_id = %q
  path = %q
  agent = "codex"
`, b.srv.URL, b.socket, claude, strings.Join(env, ", "), codex, codexUserHome, codexHome, codexKeyEnv,
		bot.Name, bot.GuildID, b.owner.ID, b.projects[0].channel, b.projects[0].dir, b.projects[1].channel, b.projects[1].dir)
	b.configure(base, cfg)
	b.start()
	t.Cleanup(func() {
		if t.Failed() {
			if b, err := os.ReadFile(filepath.Join(codexHome, "config.toml")); err == nil {
				t.Logf("the user's Codex config after the test:\n%s", b)
			}
		}
	})
	return b, fake
}

// waitContent waits until the bot message m starts with want (a reply
// posted at once is edited when the transcript has the rest of it) and
// returns what it then reads.
func (b *bridge) waitContent(m *fakediscord.Message, want string) string {
	b.t.Helper()
	deadline := time.Now().Add(long)
	for time.Now().Before(deadline) {
		if cur, ok := b.srv.Message(m.ID); ok && strings.HasPrefix(cur.Content, want) {
			return cur.Content
		}
		time.Sleep(50 * time.Millisecond)
	}
	cur, _ := b.srv.Message(m.ID)
	b.t.Fatalf("message reads %q, want %q", cur.Content, want)
	return ""
}

// The rows of issue 29 built so far, through the real daemon, fake
// Discord, the real Codex CLI and the fake Responses API, beside a Claude
// project of the same daemon: a message reaches Codex's pane and gets its
// receipt (UserPromptSubmit); the reply is every message of the turn's
// answer (Stop + the rollout); the text before a tool call is posted as
// progress (PreToolUse); /stop interrupts with Escape and the Interrupt
// hook confirms it, and the next message works. Replies end with a footer
// of model and context, saying Codex reports no cost. After a restart the
// conversation is resumed.
func TestCodexProjectBesideClaude(t *testing.T) {
	t.Parallel()
	b, fake := newCodexBridge(t)
	claudeP, codexP := b.projects[0], b.projects[1]
	fake.Script("SCN_CX_REPLY", fakeresponses.Text("First message of the answer.", "Second message of the answer."))
	fake.Script("SCN_CX_TOOL", fakeresponses.Exec("Running echo now.", "echo hi-from-codex"))
	fake.Script("SCN_CX_SLOW", fakeresponses.Step{Delay: 5 * time.Minute, Texts: []string{"too late"}})

	// Side by side: both projects at once.
	claudeMsg := b.say(claudeP, "hi from the claude project")
	codexMsg := b.say(codexP, "hello SCN_CX_REPLY")
	b.waitReply(claudeP, "ok: hi from the claude project")
	b.waitReaction(claudeMsg, "✅")
	reply := b.waitReply(codexP, "Second message of the answer.")
	b.waitReaction(codexMsg, "✅")
	// The footer: model and context from the rollout, and no cost.
	if got := b.waitContent(reply, "First message of the answer.\n\nSecond message of the answer.\n"); !regexp.MustCompile(`\n-# gpt-fake · ctx <?\d+% · no cost: Codex reports none$`).MatchString(got) {
		t.Errorf("reply %q", got)
	}
	for _, m := range b.contents(codexP.channel) {
		if strings.Contains(m, "waiting on a prompt") {
			t.Errorf("a dialog seen in Codex's pane: %q", m)
		}
	}
	if reqs := fake.Requests(); len(reqs) != 1 || reqs[0].LastUserText != "hello SCN_CX_REPLY" {
		t.Fatalf("Codex's model requests: %+v", reqs)
	}
	rec, _ := b.store.Sessions.Get(codexP.key)
	if rec.Agent != "codex" || rec.ClaudeSessionID == "" || rec.Busy {
		t.Errorf("Codex session record %+v", rec)
	}
	if rec, _ := b.store.Sessions.Get(claudeP.key); rec.Agent != "" {
		t.Errorf("the Claude project's record names agent %q", rec.Agent)
	}
	for _, m := range b.botMessages(claudeP.channel) {
		if strings.Contains(m.Content, "answer.") {
			t.Errorf("Codex's reply in the Claude channel: %q", m.Content)
		}
	}

	// A long message: Codex swallows an Enter that comes right after a long
	// paste (agents.md §1.4); it still goes in, once.
	longText := "please read this long message " + strings.Repeat("with many words in it ", 30) + "end"
	longMsg := b.say(codexP, longText)
	b.waitReply(codexP, "ok: please read this long message")
	b.waitReaction(longMsg, "✅")
	if n := len(fake.Requests()); n != 2 {
		t.Errorf("%d model requests after the long message, want 2", n)
	}

	// Progress: what the model wrote before its tool call, then the reply.
	b.say(codexP, "run SCN_CX_TOOL")
	b.waitReply(codexP, "Running echo now.")
	b.waitReply(codexP, "Done. Last tool output:")
	var order []string
	for _, m := range b.contents(codexP.channel) {
		if strings.Contains(m, "Running echo now.") || strings.Contains(m, "Done. Last tool output:") {
			order = append(order, m)
		}
	}
	if len(order) != 2 || !strings.Contains(order[0], "Running echo now.") || strings.Contains(order[1], "Running echo now.") {
		t.Errorf("progress then reply: %q", order)
	}

	// /stop: Escape (never Ctrl+C, which would quit Codex) ends the turn;
	// Codex's Interrupt hook reports it.
	b.say(codexP, "SCN_CX_SLOW take your time")
	fake.WaitRequest(t, long, "the slow prompt", func(r fakeresponses.Request) bool { return strings.Contains(r.LastUserText, "SCN_CX_SLOW") })
	it := b.srv.Command(codexP.channel, "stop", b.owner, nil)
	r := b.srv.WaitResponse(it, 5*time.Second)
	b.srv.WaitMessage(10*time.Second, "the /stop answer", func(m *fakediscord.Message) bool {
		return m.ID == r.OriginalID && strings.Contains(m.Content, "Interrupted")
	})
	deadline := time.Now().Add(long)
	for rec, _ := b.store.Sessions.Get(codexP.key); rec.LastEvent != "Interrupt"; rec, _ = b.store.Sessions.Get(codexP.key) {
		if time.Now().After(deadline) {
			t.Fatalf("no Interrupt hook after /stop; record %+v", rec)
		}
		time.Sleep(20 * time.Millisecond)
	}
	after := b.say(codexP, "hello after stop")
	b.waitReply(codexP, "ok: hello after stop")
	b.waitReaction(after, "✅")
	for _, m := range b.botMessages(codexP.channel) {
		if strings.Contains(m.Content, "too late") {
			t.Fatal("the interrupted turn still replied")
		}
	}

	// Resume after a restart (the daemon and tmux gone): the next message
	// continues the conversation with codex resume <id>.
	before, _ := b.store.Sessions.Get(codexP.key)
	for deadline := time.Now().Add(long); ; time.Sleep(100 * time.Millisecond) {
		if reg, _ := registry(t, b).Sessions.Get(codexP.key); reg.ClaudeSessionID == before.ClaudeSessionID && reg.ClaudeSessionID != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the conversation was never remembered")
		}
	}
	b.kill()
	if err := b.tmux.KillServer(context.Background()); err != nil {
		t.Fatal(err)
	}
	b.start()
	b.say(codexP, "what was the word?")
	resumed := fake.WaitRequest(t, long, "the resumed conversation", func(r fakeresponses.Request) bool { return r.LastUserText == "what was the word?" })
	if body := fmt.Sprint(resumed.Body["input"]); !strings.Contains(body, "hello SCN_CX_REPLY") {
		t.Fatalf("the resumed request does not carry the earlier conversation: %.300s", body)
	}
	b.waitReply(codexP, "ok: what was the word?")
	b.waitReply(codexP, "↩️ Resumed Codex session `"+before.ClaudeSessionID+"`.")
	rec, _ = b.store.Sessions.Get(codexP.key)
	if rec.ClaudeSessionID != before.ClaudeSessionID || rec.StartSource != "resume" || rec.Agent != "codex" {
		t.Fatalf("after restart: session %s (SessionStart source %q, agent %q), want %s (resume)", rec.ClaudeSessionID, rec.StartSource, rec.Agent, before.ClaudeSessionID)
	}
}

// A Codex project whose [codex].command is not installed: the message
// gets a clear word in its channel, naming the key, at once.
func TestCodexMissingCommand(t *testing.T) {
	t.Parallel()
	b, _ := newCodexBridge(t)
	b.reconfigure(func(cfg string) string {
		return regexp.MustCompile(`(?m)^\[codex\]\ncommand = ".*"$`).ReplaceAllString(cfg, "[codex]\ncommand = \"codex-not-installed\"")
	})
	p := b.projects[1]
	m := b.say(p, "hello")
	reply := b.waitReply(p, `"codex-not-installed" is not on the PATH the sessions get: install Codex CLI there, or set [codex].command to its full path`)
	b.waitReaction(m, "⚠️")
	if strings.Contains(reply.Content, "[claude]") {
		t.Errorf("the error names Claude's command: %q", reply.Content)
	}
	if len(b.panes()) != 0 {
		t.Error("a pane was started")
	}
}

// The [policy] holds in a Codex session: a call a deny rule covers is
// refused by the PreToolUse hook, and the model is told which rule.
func TestCodexPolicyDeny(t *testing.T) {
	t.Parallel()
	b, fake := newCodexBridge(t)
	b.reconfigure(func(cfg string) string {
		return strings.Replace(cfg, "[[servers]]", "[policy]\ndeny = [\"Bash(touch *)\"]\n[[servers]]", 1)
	})
	p := b.projects[1]
	fake.Script("SCN_CX_TOUCH", fakeresponses.Exec("", "touch inside.txt"))
	b.say(p, "run SCN_CX_TOUCH")
	fake.WaitRequest(t, long, "the refusal", func(r fakeresponses.Request) bool {
		return strings.Contains(r.LastUserText, "SCN_CX_TOUCH") && len(r.Outputs) == 1 && strings.Contains(r.Outputs[0].Output, "denied by rule Bash(touch *)")
	})
	b.waitReply(p, "Done. Last tool output:")
	if _, err := os.Stat(filepath.Join(p.dir, "inside.txt")); err == nil {
		t.Error("the denied command ran")
	}
}

// A Codex project in a git repository Codex never trusted: its "Trust this
// folder?" dialog is posted with its choices, nothing is answered until the
// owner picks one (Codex saves that decision itself), then the first
// message goes in.
func TestCodexFolderTrustDialog(t *testing.T) {
	t.Parallel()
	b, _ := newCodexBridge(t)
	p := b.projects[1]
	if out, err := exec.Command("git", "init", "-q", p.dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	userConfig := filepath.Join(filepath.Dir(b.cfg), "codex-home", "config.toml")
	raw, err := os.ReadFile(userConfig)
	if err != nil {
		t.Fatal(err)
	}
	untrusted, _, _ := strings.Cut(string(raw), "[projects.")
	if err := os.WriteFile(userConfig, []byte(untrusted), 0o600); err != nil {
		t.Fatal(err)
	}
	first := b.say(p, "hello after trust")
	msg, trust := b.dialogChoice(p, "Trust this folder?", "1. Trust and continue")
	time.Sleep(2 * time.Second)
	if screen, _ := b.tmux.Capture(t.Context(), b.panes()[0].ID, 0); !strings.Contains(screen, "› 1. Trust and continue") {
		t.Fatalf("the dialog is not waiting for its person:\n%s", screen)
	}
	b.answerDialog(msg, trust)
	b.waitReply(p, "ok: hello after trust")
	b.waitReaction(first, "✅")
}

// An API error ends a Codex turn with no hook (agents.md §1.2): the error
// still reaches the channel, as Claude's StopFailure does, from the
// rollout's task_complete, and the session is no longer busy (its typing
// indicator stops, /stop has no turn to wait for). The next message works.
func TestCodexAPIErrorEndsTheTurn(t *testing.T) {
	t.Parallel()
	b, fake := newCodexBridge(t)
	codexP := b.projects[1]
	fake.Script("SCN_CX_400", fakeresponses.Error(400, "fake bad request"))

	b.say(codexP, "please SCN_CX_400")
	failed := b.waitReply(codexP, "⚠️ Codex's turn failed: fake bad request")
	if !strings.Contains(failed.Content, "(invalid_request_error)") {
		t.Errorf("failure reply %q", failed.Content)
	}
	deadline := time.Now().Add(10 * time.Second)
	for rec, _ := b.store.Sessions.Get(codexP.key); rec.Busy; rec, _ = b.store.Sessions.Get(codexP.key) {
		if time.Now().After(deadline) {
			t.Fatalf("the session stays busy after the failed turn: %+v", rec)
		}
		time.Sleep(20 * time.Millisecond)
	}

	next := b.say(codexP, "hello after the error")
	b.waitReply(codexP, "ok: hello after the error")
	b.waitReaction(next, "✅")
	n := 0
	for _, m := range b.contents(codexP.channel) {
		if strings.Contains(m, "fake bad request") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the failure posted %d times", n)
	}
}

// A Codex session has no Claude Code deny rules: its policy hook refuses
// a shell call that names ccbridge's own files (here the bot's record,
// which holds its token), the model is told why, and the token never
// reaches it.
func TestCodexPolicyKeepsTheBotTokenFromTheModel(t *testing.T) {
	t.Parallel()
	b, fake := newCodexBridge(t)
	p := b.projects[1]
	rec := filepath.Join(b.runtime, "bots", p.bot.Name+".json")
	if _, err := os.Stat(rec); err != nil {
		t.Fatal(err)
	}
	fake.Script("SCN_CX_TOKEN", fakeresponses.Exec("", "cat "+rec))
	b.say(p, "run SCN_CX_TOKEN")
	fake.WaitRequest(t, long, "the refusal", func(r fakeresponses.Request) bool {
		return strings.Contains(r.LastUserText, "SCN_CX_TOKEN") && len(r.Outputs) == 1 && strings.Contains(r.Outputs[0].Output, "one of ccbridge's own files")
	})
	b.waitReply(p, "Done. Last tool output:")
	for _, r := range fake.Requests() {
		for _, o := range r.Outputs {
			if strings.Contains(o.Output, p.bot.Token) {
				t.Fatalf("the model was given the token: %q", o.Output)
			}
		}
	}
}
