//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/audit"
	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
	"github.com/ccbridge/ccbridge/internal/testutil/fakeresponses"
)

// The rows of issue 29 that go "as for Claude", each proven with the real
// Codex CLI on the fake Responses API, in the Codex project of
// newCodexBridge (projects[1]), mirroring the Claude scenario named in each.

// codexGot lists the distinct prompts Codex sent its model that contain s:
// what reached the pane, as the model was told it.
func codexGot(fake *fakeresponses.Server, s string) []string {
	var out []string
	for _, r := range fake.Requests() {
		if strings.Contains(r.LastUserText, s) && !slices.Contains(out, r.LastUserText) {
			out = append(out, r.LastUserText)
		}
	}
	return out
}

// waitPane waits until the pane of the session key shows want.
func (b *bridge) waitPane(key, want string) string {
	b.t.Helper()
	deadline := time.Now().Add(long)
	for {
		s, _ := b.store.Sessions.Get(key)
		screen, _ := b.tmux.Capture(context.Background(), s.PaneID, 0)
		if strings.Contains(screen, want) {
			return screen
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("the pane never showed %q:\n%s", want, screen)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// /new starts a fresh Codex conversation (as TestRelayNewAndModel for
// Claude): a new session id, and the next request carries none of the
// earlier conversation.
func TestCodexNewStartsAFreshConversation(t *testing.T) {
	t.Parallel()
	b, fake := newCodexBridge(t)
	p := b.projects[1]
	b.say(p, "remember CX_NEW_FIRST")
	b.waitReply(p, "ok: remember CX_NEW_FIRST")
	before, _ := b.store.Sessions.Get(p.key)

	b.command(p, "new", nil, "fresh conversation")
	b.say(p, "CX_NEW_SECOND who are you")
	r := fake.WaitRequest(t, long, "the first request after /new", func(r fakeresponses.Request) bool {
		return strings.Contains(r.LastUserText, "CX_NEW_SECOND")
	})
	if body := fmt.Sprint(r.Body["input"]); strings.Contains(body, "CX_NEW_FIRST") {
		t.Fatalf("the conversation after /new still carries the earlier one: %.300s", body)
	}
	b.waitReply(p, "ok: CX_NEW_SECOND who are you")
	// Codex starts its session at the first prompt (SessionStart is lazy):
	// the new id is known once that prompt went in.
	waitUntil(t, long, "a new Codex session id after /new", func() bool {
		s, _ := b.store.Sessions.Get(p.key)
		return s.ClaudeSessionID != "" && s.ClaudeSessionID != before.ClaudeSessionID && s.Agent == "codex"
	})

	// /new, then a restart before any message: the conversation after it
	// is still a fresh one, not the one /new left.
	b.command(p, "new", nil, "fresh conversation")
	b.kill()
	if err := b.tmux.KillServer(context.Background()); err != nil {
		t.Fatal(err)
	}
	b.start()
	b.say(p, "CX_NEW_THIRD after the restart")
	r = fake.WaitRequest(t, long, "the first request after /new and a restart", func(r fakeresponses.Request) bool {
		return strings.Contains(r.LastUserText, "CX_NEW_THIRD")
	})
	if body := fmt.Sprint(r.Body["input"]); strings.Contains(body, "CX_NEW_SECOND") {
		t.Fatalf("after /new and a restart the conversation /new left was resumed: %.300s", body)
	}
	b.waitReply(p, "ok: CX_NEW_THIRD after the restart")
}

// /screen shows Codex's screen with its keys; a key pressed from it
// reaches Codex's pane (as TestRelayScreenButtons): ↑ brings the last
// prompt back into Codex's composer, and Esc clears it.
func TestCodexScreenAndKeys(t *testing.T) {
	t.Parallel()
	b, _ := newCodexBridge(t)
	p := b.projects[1]
	b.say(p, "CX_SCREEN_PROMPT")
	b.waitReply(p, "ok: CX_SCREEN_PROMPT")

	screen := b.command(p, "screen", nil, "ok: CX_SCREEN_PROMPT")
	if !strings.HasPrefix(screen.Content, "```\n") || len(screen.CustomIDs()) != 11 {
		t.Fatalf("screen message %q with %d buttons", screen.Content, len(screen.CustomIDs()))
	}
	if !strings.Contains(screen.Content, "gpt-fake") {
		t.Errorf("the screen is not Codex's (no model line): %q", screen.Content)
	}
	key := func(name string) string {
		for _, id := range screen.CustomIDs() {
			if strings.Contains(id, "|"+name+"|") {
				return id
			}
		}
		t.Fatalf("no %s key on the screen: %q", name, screen.CustomIDs())
		return ""
	}
	b.srv.WaitResponse(b.srv.Click(screen.ID, key("Up"), b.owner), 5*time.Second)
	b.srv.WaitMessage(10*time.Second, "the screen after ↑", func(m *fakediscord.Message) bool {
		return m.ID == screen.ID && strings.Contains(m.Content, "› CX_SCREEN_PROMPT")
	})
	b.waitPane(p.key, "› CX_SCREEN_PROMPT")
}

// A /screen key drawn over one of Codex's dialogs is pressed only while
// that dialog is still open (as for Claude's, TestRelayScreenButtons'
// guard): once the trust dialog is answered, a stale "1" presses nothing
// and the screen is redrawn, saying why.
func TestCodexScreenKeyOnlyIntoTheDialogItWasDrawnOver(t *testing.T) {
	t.Parallel()
	b, _ := newCodexBridge(t)
	p := b.projects[1]
	gitRepo(t, p.dir)
	userConfig := filepath.Join(filepath.Dir(b.cfg), "codex-home", "config.toml")
	raw, err := os.ReadFile(userConfig)
	if err != nil {
		t.Fatal(err)
	}
	untrusted, _, _ := strings.Cut(string(raw), "[projects.")
	if err := os.WriteFile(userConfig, []byte(untrusted), 0o600); err != nil {
		t.Fatal(err)
	}
	b.say(p, "CX_DIALOG_KEY hello after trust")
	msg, trust := b.dialogChoice(p, "Trust this folder?", "1. Trust and continue")
	screen := b.command(p, "screen", nil, "Trust this folder?")
	b.answerDialog(msg, trust)
	b.waitReply(p, "ok: CX_DIALOG_KEY hello after trust")

	var one string
	for _, id := range screen.CustomIDs() {
		if strings.Contains(id, "|1|") {
			one = id
		}
	}
	b.srv.WaitResponse(b.srv.Click(screen.ID, one, b.owner), 5*time.Second)
	b.srv.WaitMessage(10*time.Second, "the screen redrawn, nothing pressed", func(m *fakediscord.Message) bool {
		return m.ID == screen.ID && strings.HasPrefix(m.Content, "⚠️ The screen changed since these keys were drawn")
	})
	s, _ := b.store.Sessions.Get(p.key)
	if pane, _ := b.tmux.Capture(context.Background(), s.PaneID, 0); strings.Contains(pane, "› 1") {
		t.Fatalf("the stale key was typed into Codex:\n%s", pane)
	}
}

// A voice note's transcript is reviewed, then Send delivers exactly its
// words to Codex, whose reply comes back (as
// TestVoiceNoteReviewSendEditCancel).
func TestCodexVoiceNoteReviewThenDelivered(t *testing.T) {
	t.Parallel()
	command, control := fakeTranscriber(t)
	b, fake := newCodexBridge(t)
	b.reconfigure(func(cfg string) string {
		return strings.Replace(cfg, "[[servers]]", fmt.Sprintf("[voice]\ncommand = [%q, \"{file}\"]\ntimeout = \"3s\"\n[[servers]]", command), 1)
	})
	p := b.projects[1]
	setTranscriber(t, control, "CX_VOICE please list the files")
	note := b.srv.PostVoice(p.channel, b.owner, oggNote(t), 1)
	review := b.waitReview(p, note, "CX_VOICE please list the files")
	if !strings.Contains(review.Content, "not sent yet") {
		t.Fatalf("review = %q", review.Content)
	}
	time.Sleep(500 * time.Millisecond)
	if got := codexGot(fake, "CX_VOICE"); len(got) != 0 {
		t.Fatalf("Codex got %q before Send", got)
	}
	b.srv.Click(review.ID, voiceButton(t, review, "Send"), b.owner)
	b.waitCardText(review, "🎙️ Sent to Codex:")
	b.waitReply(p, "ok: CX_VOICE please list the files")
	b.waitReaction(note, "✅")
	if got := codexGot(fake, "CX_VOICE"); !slices.Equal(got, []string{"CX_VOICE please list the files"}) {
		t.Fatalf("Codex got %q", got)
	}
}

// A /schedule fires into Codex once, and its reply comes back (as
// TestScheduleRunsOnceAcrossARestart).
func TestCodexScheduleFires(t *testing.T) {
	t.Parallel()
	b, fake := newCodexBridge(t)
	p := b.projects[1]
	b.command(p, "schedule", map[string]any{"when": "in 5s", "prompt": "CX_SCHED say hello"}, "⏰ Scheduled for <t:")
	post := b.srv.WaitMessage(long, "the scheduled prompt's post", func(m *fakediscord.Message) bool {
		return m.ChannelID == p.channel && m.Author.Bot && strings.Contains(m.Content, "⏰ Scheduled by")
	})
	b.waitReply(p, "ok: CX_SCHED say hello")
	b.waitReaction(post, "✅")
	time.Sleep(2 * time.Second)
	if got := codexGot(fake, "CX_SCHED"); len(got) != 1 || got[0] != "CX_SCHED say hello" {
		t.Fatalf("Codex got %q", got)
	}
	b.command(p, "thread", map[string]any{"name": "Side"}, "its messages go to a Codex session of their own.")

	// A one-shot in a new thread runs there in a Codex of its own.
	b.command(p, "schedule", map[string]any{"when": "in 3s", "prompt": "CX_SCHED_THREAD go", "where": "new-thread"}, "in a new thread")
	r := fake.WaitRequest(t, long, "the scheduled prompt in its thread", func(r fakeresponses.Request) bool { return r.LastUserText == "CX_SCHED_THREAD go" })
	var th *project
	for _, c := range b.srv.Threads(p.channel) {
		if c.Name != "Side" {
			th = threadOf(p, c.ID)
		}
	}
	if th == nil {
		t.Fatalf("no thread for the schedule; request %+v", r.LastUserText)
	}
	b.waitReply(th, "ok: CX_SCHED_THREAD go")
	if s, _ := b.store.Sessions.Get(th.key); s.Agent != "codex" || s.ThreadID != th.channel {
		t.Fatalf("the scheduled thread's session %+v", s)
	}
}

// /open in a Codex project's channel opens the folder as a Codex session:
// /open runs the agent of the project whose channel it ran in (the panel
// channel, which has none, runs the default). The thread's notices name
// Codex, its messages reach Codex, and it stays a Codex session after a
// restart (as TestOpenFolderInAThread).
func TestCodexOpenFolderRunsCodex(t *testing.T) {
	t.Parallel()
	b, fake := newCodexBridge(t)
	p := b.projects[1]
	root := withOpenRoots(t, b, p, "")
	dir := filepath.Join(root, "tool")

	b.command(p, "open", map[string]any{"path": "tool"}, "📂 Opened `"+dir+"`")
	opened := b.answer(p.channel, "📂 Opened `"+dir+"`")
	if !strings.Contains(opened.Content, "a Codex session") {
		t.Errorf("/open's answer = %q", opened.Content)
	}
	th := openedThread(t, b, p, p.channel, "tool")
	b.waitReply(th, "🟢 Codex is running in `"+dir+"`")
	m := b.say(th, "CX_OPEN hello from the phone")
	b.waitReply(th, "ok: CX_OPEN hello from the phone")
	b.waitReaction(m, "✅")
	if got := codexGot(fake, "CX_OPEN"); len(got) != 1 {
		t.Fatalf("Codex got %q", got)
	}
	if s, _ := b.store.Sessions.Get(th.key); s.Agent != "codex" || s.Cwd != dir {
		t.Fatalf("opened session %+v; want Codex in %s", s, dir)
	}

	b.kill()
	if err := b.tmux.KillServer(context.Background()); err != nil {
		t.Fatal(err)
	}
	b.start()
	b.say(th, "CX_OPEN_AGAIN after the restart")
	b.waitReply(th, "ok: CX_OPEN_AGAIN after the restart")
	if s, _ := b.store.Sessions.Get(th.key); s.Agent != "codex" {
		t.Fatalf("after the restart the opened folder runs %q", s.Agent)
	}
}

// A thread of a Codex project with worktree isolation runs its own Codex
// in its own worktree; Codex's change there is shown by /diff, landed by
// /commit and /merge, and a later one thrown away by /discard (as
// TestWorktreeIsolationAndKeptOnArchive, TestLandDiffCommitMerge and
// TestLandDiscardAndAudit).
func TestCodexWorktreeThreadLanding(t *testing.T) {
	t.Parallel()
	b, fake := newCodexBridge(t)
	p := b.projects[1]
	gitRepo(t, p.dir)
	b.reconfigure(func(cfg string) string {
		line := "  agent = \"codex\"\n" // the Codex project's last line
		return strings.Replace(cfg, line, line+"    [servers.projects.thread]\n    isolation = \"worktree\"\n", 1)
	})
	b.say(p, "CX_WT_CHANNEL in the channel")
	b.waitReply(p, "ok: CX_WT_CHANNEL in the channel")

	th := threadOf(p, b.srv.StartThread(p.channel, "Feature one", b.owner))
	fake.Script("CX_WT_WRITE", fakeresponses.Exec("", "printf 'thread line\\n' > feature.txt && pwd"))
	m := b.say(th, "CX_WT_WRITE")
	reply := b.waitReply(th, "Done. Last tool output: ")
	b.waitReaction(m, "✅")
	var wt string // pwd's line of Codex's tool output
	for _, line := range strings.Split(reply.Content, "\n") {
		if strings.HasPrefix(line, filepath.Join(p.dir, ".claude", "worktrees")+"/") {
			wt = strings.TrimSpace(line)
		}
	}
	if wt == "" {
		t.Fatalf("Codex ran in %q, not in a worktree of %s", wt, p.dir)
	}
	if _, err := os.Stat(filepath.Join(p.dir, "feature.txt")); err == nil {
		t.Fatal("the file landed in the project checkout")
	}
	ch, _ := b.store.Sessions.Get(p.key)
	tr, _ := b.store.Sessions.Get(th.key)
	if tr.Agent != "codex" || tr.ThreadID != th.channel || tr.ClaudeSessionID == "" || tr.ClaudeSessionID == ch.ClaudeSessionID {
		t.Fatalf("channel session %+v, thread session %+v", ch, tr)
	}
	for _, msg := range b.botMessages(p.channel) {
		if strings.Contains(msg.Content, "Last tool output") {
			t.Fatal("the thread's reply landed in the channel")
		}
	}

	// Mid-turn, git waits for Codex's turn to end (Codex's hooks mark it busy).
	fake.Script("CX_WT_SLOW", fakeresponses.Step{Delay: 6 * time.Second, Texts: []string{"slow turn done"}})
	b.say(th, "CX_WT_SLOW")
	fake.WaitRequest(t, long, "the slow prompt", func(r fakeresponses.Request) bool { return strings.Contains(r.LastUserText, "CX_WT_SLOW") })
	if busy := b.command(th, "diff", nil, "mid-turn"); !strings.HasPrefix(busy.Content, "⏳ Codex is mid-turn") {
		t.Errorf("/diff mid-turn = %q", busy.Content)
	}
	b.waitReply(th, "slow turn done")

	d := b.command(th, "diff", nil, "Changes in")
	if !strings.Contains(d.Content, "feature.txt") {
		t.Fatalf("/diff = %q", d.Content)
	}
	b.command(th, "commit", map[string]any{"message": "Add the feature"}, "Committed")
	merged := b.command(th, "merge", nil, "Merged")
	if !strings.Contains(merged.Content, "fast-forward") {
		t.Fatalf("/merge = %q", merged.Content)
	}
	if got := gitIn(t, p.dir, "show", "main:feature.txt"); got != "thread line" {
		t.Fatalf("main:feature.txt = %q", got)
	}

	fake.Script("CX_WT_SCRATCH", fakeresponses.Exec("", "printf 'throwaway\\n' > scratch.txt && echo wrote-scratch"))
	b.say(th, "CX_WT_SCRATCH")
	b.waitReply(th, "Output:\nwrote-scratch")
	ask := b.command(th, "discard", nil, "Discard these uncommitted changes")
	if !strings.Contains(ask.Content, "scratch.txt") {
		t.Fatalf("/discard = %q", ask.Content)
	}
	b.srv.Click(ask.ID, landAction(t, ask, "discard"), b.owner)
	b.waitCardText(ask, "Discarded the uncommitted changes")
	if _, err := os.Stat(filepath.Join(wt, "scratch.txt")); !os.IsNotExist(err) {
		t.Fatalf("scratch.txt is still there: %v", err)
	}
}

// A secret in Codex's reply reaches Discord masked, while Codex's terminal
// shows it whole (as TestRedactionMasksRepliesNotTheTerminal).
func TestCodexRedactionMasksReplies(t *testing.T) {
	t.Parallel()
	b, fake := newCodexBridge(t)
	p := b.projects[1]
	token := "ghp_" + strings.Repeat("Zq9Xw8Ve7U", 4)[:36]
	fake.Script("CX_SECRET", fakeresponses.Text("Your token is "+token+" — keep it safe."))
	b.say(p, "CX_SECRET")
	m := b.waitReply(p, "Your token is")
	if strings.Contains(m.Content, token) || !strings.Contains(m.Content, "[redacted GitHub token]") {
		t.Fatalf("reply not masked: %q", m.Content)
	}
	time.Sleep(time.Second) // an edit with the rest of the turn would come within it
	for _, c := range b.contents(p.channel) {
		if strings.Contains(c, token) {
			t.Fatalf("the token reached Discord: %q", c)
		}
	}
	b.waitPane(p.key, token)

	// The text before a tool call (progress) and the tool's output in the
	// reply are masked too.
	fake.Script("CX_TOOLTOKEN", fakeresponses.Exec("Checking "+token+" first.", "echo "+token))
	b.say(p, "CX_TOOLTOKEN")
	b.waitReply(p, "Checking [redacted GitHub token] first.")
	b.waitReply(p, "Done. Last tool output:")
	for _, c := range b.contents(p.channel) {
		if strings.Contains(c, token) {
			t.Fatalf("the token reached Discord: %q", c)
		}
	}
}

// A Codex permission answered from Discord is in the audit log, and /audit
// lists it (as TestLandDiscardAndAudit and TestAuditRecordsATerminalAnswer);
// so is a [policy] refusal (as TestPolicyAskAndDenyInAcceptEdits).
func TestCodexPermissionIsAudited(t *testing.T) {
	t.Parallel()
	b, fake := newCodexBridge(t)
	b.reconfigure(func(cfg string) string {
		return strings.Replace(cfg, "[[servers]]", "[policy]\ndeny = [\"Bash(rm *)\"]\n[[servers]]", 1)
	})
	p := b.projects[1]
	outside := filepath.Join(settledTempDir(t), "audited.txt")
	fake.Script("CX_AUDIT", fakeresponses.ExecEscalated("", "touch "+outside+" && echo audit-ok", "Create a file outside the workspace?"))
	b.say(p, "run CX_AUDIT")
	card := b.waitCard(p, "the card", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "audited.txt") })
	b.srv.Click(card.ID, action(t, card, "allow"), b.owner)
	b.waitReply(p, "Output:\naudit-ok")
	b.waitAudit("the Discord Allow", func(e audit.Entry) bool {
		return e.From == audit.FromDiscord && e.Answer == "allow" && e.Who == b.owner.ID && strings.Contains(e.Asked, "audited.txt")
	})
	a := b.command(p, "audit", map[string]any{"count": 5}, "decision(s)")
	if !strings.Contains(a.Content, "**allow** discord") || !strings.Contains(a.Content, "audited.txt") {
		t.Fatalf("/audit = %q", a.Content)
	}

	// A [policy] refusal of Codex's call is audited, naming its rule.
	fake.Script("CX_DENYAUDIT", fakeresponses.Exec("", "rm -f refused.txt"))
	b.say(p, "run CX_DENYAUDIT")
	b.waitAudit("the policy's refusal", func(e audit.Entry) bool {
		return e.From == audit.FromPolicy && e.Answer == "deny" && e.Rule == "Bash(rm *)" && strings.Contains(e.Asked, "rm -f refused.txt")
	})
}

// Messages sent to a Codex project while the daemon was stopped, and while
// it was dead, reach Codex once each, in order, with their ✅, in the
// channel and in a thread (as TestCatchUpAfterStopAndCrash and
// TestCatchUpInAThread).
func TestCodexCatchUp(t *testing.T) {
	t.Parallel()
	b, fake := newCodexBridge(t)
	p := b.projects[1]
	b.say(p, "CX_CU_WARM")
	b.waitReply(p, "ok: CX_CU_WARM")

	b.stop()
	stopped := []*fakediscord.Message{b.say(p, "CX_CU_TERM_1"), b.say(p, "CX_CU_TERM_2")}
	b.start()
	for _, m := range stopped {
		b.waitReaction(m, "✅")
		b.waitReply(p, "ok: "+m.Content)
	}
	th := threadOf(p, b.srv.StartThread(p.channel, "side work", b.owner))
	b.say(th, "CX_CU_THREAD_0")
	b.waitReply(th, "ok: CX_CU_THREAD_0")

	b.kill()
	dead := b.say(p, "CX_CU_KILL")
	inThread := b.say(th, "CX_CU_THREAD_1")
	b.start()
	b.waitReaction(dead, "✅")
	b.waitReply(p, "ok: CX_CU_KILL")
	b.waitReaction(inThread, "✅")
	b.waitReply(th, "ok: CX_CU_THREAD_1")
	if s, _ := b.store.Sessions.Get(th.key); s.Agent != "codex" {
		t.Errorf("the thread's session runs %q", s.Agent)
	}

	var got []string
	for _, r := range fake.Requests() {
		got = append(got, r.LastUserText)
	}
	onceInOrder(t, got, "CX_CU_WARM", "CX_CU_TERM_1", "CX_CU_TERM_2", "CX_CU_KILL")
	time.Sleep(time.Second) // a second reply would come within it
	b.repliesOnce(p, "CX_CU_WARM", "CX_CU_TERM_1", "CX_CU_TERM_2", "CX_CU_KILL")
	b.repliesOnce(th, "CX_CU_THREAD_1")
}
