//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/testutil/claudetest"
	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
	"github.com/ccbridge/ccbridge/internal/testutil/fakemodel"
	"github.com/ccbridge/ccbridge/internal/tmux"
)

// 1. An owner's "hello" starts a pane, reaches Claude, gets ✅, and the
// reply arrives in the channel.
func TestRelayHello(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	b.model.Script("SCN_HELLO", fakemodel.Text("Hello from Claude <@everyone>"))
	m := b.say(p, "hello SCN_HELLO")
	reply := b.waitReply(p, "Hello from Claude")
	b.waitReaction(m, "✅")
	b.model.WaitRequest(t, long, "the owner's message", func(r fakemodel.Request) bool { return r.LastUserText == "hello SCN_HELLO" })
	if !strings.Contains(string(reply.AllowedMentions), `"parse":[]`) {
		t.Errorf("mentions not disabled: %s", reply.AllowedMentions)
	}
	if n := len(b.panes()); n != 1 {
		t.Errorf("%d panes, want 1", n)
	}
	time.Sleep(500 * time.Millisecond)
	if n := len(b.botMessages(p.channel)); n != 1 {
		t.Errorf("%d bot messages, want exactly the reply", n)
	}
}

// 2. Code fences, Unicode, $(rm -rf ~), C-c and an ESC byte reach the model
// as the exact text (ESC removed), and nothing runs.
func TestRelayExactText(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	sent := "SCN_EXACT check this:\n```go\nfmt.Println(\"héllo 世界 😀\")\n```\n$(rm -rf ~) `whoami` C-c Enter \x1b[31mred\x1b[0m"
	want := "SCN_EXACT check this:\n```go\nfmt.Println(\"héllo 世界 😀\")\n```\n$(rm -rf ~) `whoami` C-c Enter [31mred[0m"
	m := b.say(p, sent)
	r := b.model.WaitRequest(t, long, "the exact text", func(r fakemodel.Request) bool { return strings.Contains(r.LastUserText, "SCN_EXACT") })
	if !strings.Contains(r.LastUserText, want) {
		t.Fatalf("model got %q\nwant it to hold %q", r.LastUserText, want)
	}
	b.waitReaction(m, "✅")
	b.waitReply(p, "ok: ")
	for _, req := range b.model.Requests() {
		if len(req.ToolResults) > 0 {
			t.Fatalf("a tool ran: %+v", req.ToolResults)
		}
	}
}

// 3. A 7,000-character reply with code blocks arrives as ≤2000-character
// chunks, fences balanced, in order, once.
func TestRelayLongReplyChunks(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	var sb strings.Builder
	for i := 0; sb.Len() < 7000; i++ {
		sb.WriteString("Section " + string(rune('A'+i%26)) + itoa(i) + ": " + strings.Repeat("lorem ipsum ", 12) + "\n\n")
		if i%6 == 2 {
			sb.WriteString("```python\n" + strings.Repeat("print('x')\n", 25) + "```\n\n")
		}
	}
	long := strings.TrimSpace(sb.String())
	b.model.Script("SCN_LONG", fakemodel.Text(long))
	b.say(p, "SCN_LONG please")
	b.waitReply(p, "Section ")
	// Wait for the last section, then for anything extra.
	last := long[strings.LastIndex(long, "Section "):][:12]
	b.waitReply(p, last)
	time.Sleep(time.Second)
	msgs := b.botMessages(p.channel)
	if len(msgs) < 4 {
		t.Fatalf("%d messages for %d characters", len(msgs), len(long))
	}
	next := 0
	for _, m := range msgs {
		if n := len([]rune(m.Content)); n > 2000 {
			t.Errorf("chunk of %d characters", n)
		}
		if strings.Count(m.Content, "```")%2 != 0 {
			t.Errorf("unbalanced fences in:\n%s", m.Content)
		}
		for {
			label := "Section " + string(rune('A'+next%26)) + itoa(next) + ":"
			if !strings.Contains(m.Content, label) {
				break
			}
			next++
		}
	}
	if want := strings.Count(long, "Section "); next != want {
		t.Fatalf("saw %d sections in order, want %d (duplicated or reordered chunks)", next, want)
	}
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}

// 4. A turn with text, a tool call, and a final message of two text blocks
// posts both final blocks, in one message: the last block goes at once
// (last_assistant_message), the first is edited in from the transcript.
func TestRelayFinalMessageBlocks(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	b.model.Script("SCN_TWO",
		fakemodel.Tool("Let me check.", "Bash", map[string]any{"command": "echo checked", "description": "check"}),
		fakemodel.Text("Part A of the answer.", "Part B of the answer."))
	b.say(p, "SCN_TWO go")
	reply := b.waitReply(p, "Part A of the answer.\n\nPart B of the answer.")
	if body(reply.Content) != "Part A of the answer.\n\nPart B of the answer." {
		t.Fatalf("reply = %q", reply.Content)
	}
	var holding []string
	for _, m := range b.botMessages(p.channel) {
		if strings.Contains(m.Content, "Part ") {
			holding = append(holding, m.Content)
		}
	}
	if len(holding) != 1 {
		t.Fatalf("the final blocks are in %d messages: %q", len(holding), holding)
	}
}

// 5. A non-owner's message, click and slash command change nothing.
func TestRelayStrangersChangeNothing(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	stranger := b.srv.NewUser("stranger")
	b.srv.Post(p.channel, stranger, "please run rm -rf ~")
	it := b.srv.Command(p.channel, "stop", stranger, nil)
	if r := b.srv.WaitResponse(it, 5*time.Second); r.ResponseType != 4 || !strings.Contains(string(r.Response), "Only the owners") || !strings.Contains(string(r.Response), `"flags":64`) {
		t.Fatalf("stranger's command answered %d %s", r.ResponseType, r.Response)
	}
	// The owner's /status gives a message to click on; the stranger clicks a
	// real key button of this instance on it.
	st := b.srv.Command(p.channel, "status", b.owner, nil)
	r := b.srv.WaitResponse(st, 5*time.Second)
	b.srv.WaitMessage(5*time.Second, "status", func(m *fakediscord.Message) bool {
		return m.ID == r.OriginalID && strings.Contains(m.Content, "stopped")
	})
	click := b.srv.ClickStale(r.OriginalID, "cb1|"+b.instance()+"|key|"+p.key+"|Enter", stranger)
	if cr := b.srv.WaitResponse(click, 5*time.Second); !strings.Contains(string(cr.Response), "Only the owners") {
		t.Fatalf("stranger's click answered %s", cr.Response)
	}
	time.Sleep(2 * time.Second)
	if panes := b.panes(); len(panes) != 0 {
		t.Fatalf("a pane was started: %+v", panes)
	}
	if reqs := b.model.Requests(); len(reqs) != 0 {
		t.Fatalf("the model was asked: %+v", reqs)
	}
	for _, m := range b.srv.Messages(p.channel) {
		if len(m.Reactions) > 0 {
			t.Fatalf("reacted to %q", m.Content)
		}
	}
}

// 6. An attached file lands with its bytes intact and its path in the
// prompt; [DISCORD_ATTACH: out.txt] uploads a file; a path that escapes the
// outputs folder is refused and said.
func TestRelayAttachments(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	data := []byte{0x89, 'P', 'N', 'G', 0, 1, 2, 0xff}
	b.say(p, "SCN_FILES see the picture", fakediscord.File{Name: "../shot 1.png", ContentType: "image/png", Data: data})
	r := b.model.WaitRequest(t, long, "the attachment path", func(r fakemodel.Request) bool { return strings.Contains(r.LastUserText, "Attached files:") })
	// Four or more lines arrive wrapped in <pasted_content>: read one line.
	i := strings.Index(r.LastUserText, "\n- ")
	path, _, _ := strings.Cut(r.LastUserText[i+3:], "\n")
	if !strings.HasPrefix(path, b.runtime) || !strings.HasSuffix(path, "shot_1.png") {
		t.Fatalf("attachment path %q", path)
	}
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("attachment bytes %v, %v", got, err)
	}
	outputs, err := b.store.Dir.Outputs(p.key)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(outputs, "out.txt"), []byte("report body"), 0o600)
	b.model.Script("SCN_SEND", fakemodel.Text("Here it is. [DISCORD_ATTACH: out.txt] [DISCORD_ATTACH: ../../etc/passwd]"))
	b.say(p, "SCN_SEND the report")
	reply := b.waitReply(p, "Here it is.")
	if len(reply.Files) != 1 || reply.Files[0].Name != "out.txt" || string(reply.Files[0].Data) != "report body" {
		t.Fatalf("files = %+v", reply.Files)
	}
	if !strings.Contains(reply.Content, "not attached: ../../etc/passwd is outside the outputs folder") || strings.Contains(reply.Content, "DISCORD_ATTACH") {
		t.Fatalf("reply = %q", reply.Content)
	}
}

// 7. /stop during a slow turn interrupts it; the next message works normally.
func TestRelayStopInterrupts(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	b.model.Script("SCN_SLOW", fakemodel.Step{Delay: 60 * time.Second, Texts: []string{"too late"}})
	b.say(p, "SCN_SLOW take your time")
	b.model.WaitRequest(t, long, "the slow prompt", func(r fakemodel.Request) bool { return strings.Contains(r.LastUserText, "SCN_SLOW") })
	it := b.srv.Command(p.channel, "stop", b.owner, nil)
	r := b.srv.WaitResponse(it, 5*time.Second)
	b.srv.WaitMessage(10*time.Second, "the /stop answer", func(m *fakediscord.Message) bool {
		return m.ID == r.OriginalID && strings.Contains(m.Content, "Interrupted")
	})
	m := b.say(p, "hello after stop")
	b.waitReply(p, "ok: hello after stop")
	b.waitReaction(m, "✅")
	for _, msg := range b.botMessages(p.channel) {
		if strings.Contains(msg.Content, "too late") {
			t.Fatal("the interrupted turn still replied")
		}
	}
	if s, _ := b.store.Sessions.Get(p.key); s.Busy {
		t.Error("session still busy")
	}
}

// 7b. /stop as soon as Claude has the message (its UserPromptSubmit hook
// ran, the screen may not show the turn yet) still interrupts the turn.
func TestRelayStopRightAfterTheMessage(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	b.model.Script("SCN_SLOW_AT_ONCE", fakemodel.Step{Delay: 5 * time.Minute, Texts: []string{"too late"}})
	b.say(p, "SCN_SLOW_AT_ONCE take your time")
	deadline := time.Now().Add(long)
	for s, _ := b.store.Sessions.Get(p.key); !s.Busy; s, _ = b.store.Sessions.Get(p.key) {
		if time.Now().After(deadline) {
			t.Fatal("the turn never started")
		}
		time.Sleep(5 * time.Millisecond)
	}
	it := b.srv.Command(p.channel, "stop", b.owner, nil)
	r := b.srv.WaitResponse(it, 5*time.Second)
	b.srv.WaitMessage(10*time.Second, "the /stop answer", func(m *fakediscord.Message) bool {
		return m.ID == r.OriginalID && strings.Contains(m.Content, "Interrupted")
	})
	m := b.say(p, "hello after an early stop")
	b.waitReply(p, "ok: hello after an early stop")
	b.waitReaction(m, "✅")
}

// 8. Two bots with two projects each: every reply lands in its own channel.
func TestRelayTwoBotsFourProjects(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 2, 2, "")
	for _, p := range b.projects {
		b.say(p, "hi from "+p.key)
	}
	for _, p := range b.projects {
		b.waitReply(p, "ok: hi from "+p.key)
	}
	time.Sleep(time.Second)
	for _, p := range b.projects {
		for _, m := range b.botMessages(p.channel) {
			if !strings.Contains(m.Content, p.key) {
				t.Errorf("%s got %q", p.key, m.Content)
			}
		}
	}
	if n := len(b.panes()); n != 4 {
		t.Errorf("%d panes, want 4", n)
	}
}

// 9. Discord answers 500 five times, then recovers: the reply arrives
// exactly once, in order with later ones.
func TestRelayDiscordErrorsThenRecovery(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	b.model.Script("SCN_FIRST", fakemodel.Text("first reply"))
	b.model.Script("SCN_SECOND", fakemodel.Text("second reply"))
	b.srv.Fail("POST", "/channels/*/messages", 500, 5)
	b.say(p, "SCN_FIRST")
	b.waitReply(p, "first reply")
	b.say(p, "SCN_SECOND")
	b.waitReply(p, "second reply")
	time.Sleep(time.Second)
	if replies := b.bodies(p.channel); strings.Join(replies, "|") != "first reply|second reply" {
		t.Fatalf("replies = %q", replies)
	}
}

// 10. The daemon is killed mid-turn and restarted: one pane, and the reply
// is posted once. The hooks post through the daemon: while it is down the
// reply waits in the outbox, and the restarted daemon posts it.
func TestRelayDaemonRestartMidTurn(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	b.model.Script("SCN_MID", fakemodel.Step{Delay: 4 * time.Second, Texts: []string{"answer after the crash"}})
	b.say(p, "SCN_MID")
	b.model.WaitRequest(t, long, "the prompt", func(r fakemodel.Request) bool { return strings.Contains(r.LastUserText, "SCN_MID") })
	b.kill()
	b.waitQueued(t, "answer after the crash")
	if n := len(b.contents(p.channel)); n != 0 {
		t.Fatalf("posted while the daemon was down: %q", b.contents(p.channel))
	}
	b.start()
	b.waitReply(p, "answer after the crash")
	m := b.say(p, "and now?")
	b.waitReply(p, "ok: and now?")
	b.waitReaction(m, "✅")
	time.Sleep(time.Second)
	if n := len(b.panes()); n != 1 {
		t.Errorf("%d panes after restart, want 1", n)
	}
	count := 0
	for _, m := range b.botMessages(p.channel) {
		if strings.Contains(m.Content, "answer after the crash") {
			count++
		}
	}
	if count != 1 {
		t.Errorf("the mid-turn reply was posted %d times", count)
	}
}

// 11. /screen shows the pane; its buttons send the keys.
func TestRelayScreenButtons(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	b.say(p, "hello")
	b.waitReply(p, "ok: hello")
	it := b.srv.Command(p.channel, "screen", b.owner, nil)
	r := b.srv.WaitResponse(it, 5*time.Second)
	screen := b.srv.WaitMessage(10*time.Second, "the screen", func(m *fakediscord.Message) bool {
		return m.ID == r.OriginalID && strings.Contains(m.Content, "manual mode on")
	})
	if !strings.HasPrefix(screen.Content, "```\n") || len(screen.CustomIDs()) != 11 {
		t.Fatalf("screen message %q with %d buttons", screen.Content, len(screen.CustomIDs()))
	}
	var btab string
	for _, id := range screen.CustomIDs() {
		if strings.Contains(id, "|BTab|") {
			btab = id
		}
	}
	click := b.srv.Click(screen.ID, btab, b.owner)
	b.srv.WaitResponse(click, 5*time.Second)
	b.srv.WaitMessage(10*time.Second, "the screen after Shift+Tab", func(m *fakediscord.Message) bool {
		return m.ID == screen.ID && strings.Contains(m.Content, "accept edits on")
	})
}

// Messages sent while Claude is busy are delivered and confirmed; the
// channel shows typing meanwhile; a gateway drop loses nothing.
func TestRelayBusyQueueTypingAndReconnect(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	b.model.Script("SCN_BUSY", fakemodel.Step{Delay: 4 * time.Second, Texts: []string{"busy turn done"}})
	first := b.say(p, "SCN_BUSY")
	b.model.WaitRequest(t, long, "the busy prompt", func(r fakemodel.Request) bool { return strings.Contains(r.LastUserText, "SCN_BUSY") })
	second := b.say(p, "queued one")
	third := b.say(p, "queued two")
	for _, m := range []*fakediscord.Message{first, second, third} {
		b.waitReaction(m, "✅")
	}
	b.waitReply(p, "busy turn done")
	typing := false
	for _, c := range b.srv.Calls() {
		typing = typing || (c.Method == "POST" && c.Path == "/channels/"+p.channel+"/typing" && c.Status == 204)
	}
	if !typing {
		t.Error("no typing indicator during the busy turn")
	}
	b.srv.DropGateway(p.bot)
	m := b.say(p, "after the drop")
	b.waitReaction(m, "✅")
	b.waitReply(p, "after the drop")
	if st := b.srv.Stats(); st.Resumes < 1 {
		t.Errorf("no RESUME after the drop: %+v", st)
	}
}

// A Claude session started by hand in a project directory, with the hooks
// registered globally by install-hooks, reports to the project's channel;
// a pane the bridge started still replies exactly once.
func TestRelayHandStartedSessionWithGlobalHooks(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	home := claudeHome(t, b.cfg)
	out, err := exec.Command(bins.bridge, "install-hooks", "--settings", filepath.Join(home, ".claude", "settings.json"), "--config", b.cfg).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "registered ccbridge hooks") {
		t.Fatalf("install-hooks: %v\n%s", err, out)
	}
	m := b.say(p, "via the bridge")
	b.waitReply(p, "ok: via the bridge")
	b.waitReaction(m, "✅")

	sub := filepath.Join(p.dir, "sub")
	os.MkdirAll(sub, 0o755)
	hand := claudetest.Start(t, claudetest.Options{Tmux: b.tmux, Session: "by-hand", Dir: sub, ModelURL: b.model.URL,
		Env: map[string]string{"HOME": home, state.EnvRuntimeDir: b.runtime}})
	if err := b.tmux.PasteTextIf(context.Background(), hand.Pane, tmux.Guard{}, "typed at the keyboard"); err != nil {
		t.Fatal(err)
	}
	b.tmux.SendKeys(context.Background(), hand.Pane, tmux.KeyEnter)
	b.waitReply(p, "ok: typed at the keyboard")
	time.Sleep(2 * time.Second)
	for _, want := range []string{"ok: via the bridge", "ok: typed at the keyboard"} {
		n := 0
		for _, msg := range b.botMessages(p.channel) {
			if body(msg.Content) == want {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%q posted %d times", want, n)
		}
	}
}

// claudeHome reads the HOME the bridge gives Claude from its config.
func claudeHome(t *testing.T, cfgPath string) string {
	t.Helper()
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Claude.Env["HOME"]
}

// A turn that fails (an API error) posts the error text.
func TestRelayStopFailurePostsTheError(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	b.model.Script("SCN_FAIL", fakemodel.Step{Status: 400, ErrMsg: "fake bad request"})
	b.say(p, "SCN_FAIL")
	reply := b.waitReply(p, "Claude's turn failed")
	if !strings.Contains(reply.Content, "fake bad request") {
		t.Fatalf("reply = %q", reply.Content)
	}
}

// A Claude that never shows its input box is reported with its screen.
func TestRelayClaudeThatDoesNotStartIsReported(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	cfg, _ := os.ReadFile(b.cfg)
	broken := strings.Replace(string(cfg), "[claude]\n", "[claude]\nstart_timeout = \"3s\"\nargs = [\"-c\", \"echo this is not claude; sleep 600\"]\n", 1)
	broken = regexp.MustCompile(`(?m)^command = .*$`).ReplaceAllString(broken, `command = "sh"`)
	os.WriteFile(b.cfg, []byte(broken), 0o600)
	b.cmd.Process.Signal(syscall.SIGTERM)
	b.cmd.Wait()
	b.start()
	m := b.say(p, "hello?")
	notice := b.waitReply(p, "Could not start Claude")
	if !strings.Contains(notice.Content, "this is not claude") || !strings.Contains(notice.Content, "within 3s") {
		t.Fatalf("notice = %q", notice.Content)
	}
	b.waitReaction(m, "⚠️")
}

// /new starts a fresh conversation (a new Claude session id); /model
// switches the model the next turn uses.
func TestRelayNewAndModel(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	b.say(p, "first conversation")
	b.waitReply(p, "ok: first conversation")
	before, _ := b.store.Sessions.Get(p.key)

	answer := func(name string, opts map[string]any, want string) {
		t.Helper()
		it := b.srv.Command(p.channel, name, b.owner, opts)
		r := b.srv.WaitResponse(it, 5*time.Second)
		b.srv.WaitMessage(15*time.Second, "the /"+name+" answer", func(m *fakediscord.Message) bool {
			return m.ID == r.OriginalID && strings.Contains(m.Content, want)
		})
	}
	answer("new", nil, "fresh conversation")
	deadline := time.Now().Add(long)
	for {
		s, _ := b.store.Sessions.Get(p.key)
		if s.ClaudeSessionID != "" && s.ClaudeSessionID != before.ClaudeSessionID {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Claude session id still %q after /new", s.ClaudeSessionID)
		}
		time.Sleep(100 * time.Millisecond)
	}
	answer("model", map[string]any{"name": "sonnet"}, "Model: sonnet")
	b.say(p, "which model now")
	// Claude prefixes the prompt with records of the local commands run before it.
	r := b.model.WaitRequest(t, long, "a request after /model", func(r fakemodel.Request) bool { return strings.HasSuffix(r.LastUserText, "which model now") })
	if !strings.Contains(r.Model, "sonnet") {
		t.Fatalf("model after /model sonnet = %q", r.Model)
	}
	b.waitReply(p, "which model now")
}

// slowThenQuick sends a slow prompt and, while Claude works on it, a quick
// one, which Claude Code runs the moment the slow turn ends: the two Stop
// hooks overlap. It returns the two replies' positions in the channel.
func (b *bridge) slowThenQuick(p *project, tag string, delay time.Duration) (slow, quick int) {
	b.t.Helper()
	trigger := "SCN_ORDER_" + tag + "_" // not a prefix of another tag's
	b.model.Script(trigger, fakemodel.Step{Delay: delay, Texts: []string{"slow reply " + tag}})
	b.say(p, trigger)
	b.model.WaitRequest(b.t, long, "the slow prompt", func(r fakemodel.Request) bool { return strings.Contains(r.LastUserText, trigger) })
	b.say(p, "quick "+tag)
	b.waitReply(p, "slow reply "+tag)
	b.waitReply(p, "ok: quick "+tag)
	return b.index(p, "slow reply "+tag), b.index(p, "ok: quick "+tag)
}

// A slow turn followed at once by a quick one posts the two replies in turn
// order, with the default footer on each.
func TestRelayRepliesInTurnOrder(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	slow, quick := b.slowThenQuick(p, "A", 2*time.Second)
	if slow < 0 || quick < slow {
		t.Fatalf("slow reply at %d, quick reply at %d: %q", slow, quick, b.contents(p.channel))
	}
	for _, c := range b.contents(p.channel) {
		if !strings.Contains(c, "\n-# ") {
			t.Errorf("reply %q has no footer", c)
		}
	}
}

// The same while Discord answers the next five creates with 500: what the
// hooks cannot post goes through the outbox, still in turn order, once each.
func TestRelayRepliesInTurnOrderUnder500s(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	trigger := "SCN_ORDER_F"
	b.model.Script(trigger, fakemodel.Step{Delay: 2 * time.Second, Texts: []string{"slow reply F"}})
	b.say(p, trigger)
	b.model.WaitRequest(t, long, "the slow prompt", func(r fakemodel.Request) bool { return strings.Contains(r.LastUserText, trigger) })
	b.srv.Fail("POST", "/channels/"+p.channel+"/messages", 500, 5)
	b.say(p, "quick F")
	b.waitReply(p, "slow reply F")
	b.waitReply(p, "ok: quick F")
	time.Sleep(time.Second) // a duplicate would show up by now
	var got []string
	for _, c := range b.contents(p.channel) {
		got = append(got, strings.SplitN(c, "\n", 2)[0])
	}
	if strings.Join(got, "|") != "slow reply F|ok: quick F" {
		t.Fatalf("replies = %q", b.contents(p.channel))
	}
}

// waitQueued waits until the outbox holds a message containing want.
func (b *bridge) waitQueued(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(long)
	for time.Now().Before(deadline) {
		all, _ := b.store.Outbox.List()
		for _, o := range all {
			if strings.Contains(o.Content, want) {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no queued message containing %q within %v", want, long)
}
