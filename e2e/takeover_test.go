//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/execx"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/testutil/claudetest"
	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
	"github.com/ccbridge/ccbridge/internal/testutil/fakemodel"
	"github.com/ccbridge/ccbridge/internal/tmux"
)

// desk is a Claude started by hand in a pane of the user's own tmux server
// (separate from the bridge's), with ccbridge's hooks installed globally.
type desk struct {
	tmux   *tmux.Server
	claude *claudetest.Claude
}

func installHooks(t *testing.T, b *bridge) string {
	t.Helper()
	home := claudeHome(t, b.cfg)
	out, err := exec.Command(bins.bridge, "install-hooks", "--settings", filepath.Join(home, ".claude", "settings.json"), "--config", b.cfg).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "registered ccbridge hooks") {
		t.Fatalf("install-hooks: %v\n%s", err, out)
	}
	return home
}

func startDesk(t *testing.T, b *bridge, home, dir string) *desk {
	t.Helper()
	user := tmux.New(execx.Exec{}, tmux.Options{Socket: fmt.Sprintf("ccbe2e-user-%d-%d", os.Getpid(), socketSeq.Add(1))})
	t.Cleanup(func() { _ = user.KillServer(context.Background()) })
	c := claudetest.Start(t, claudetest.Options{Tmux: user, Session: "desk", Dir: dir, ModelURL: b.model.URL,
		Env: map[string]string{"HOME": home, state.EnvRuntimeDir: b.runtime}})
	return &desk{tmux: user, claude: c}
}

// typeAtDesk types a prompt into the desk's Claude, as its user would.
func (d *desk) typeAtDesk(t *testing.T, text string) {
	t.Helper()
	if err := d.tmux.PasteTextIf(context.Background(), d.claude.Pane, tmux.Guard{}, text); err != nil {
		t.Fatal(err)
	}
	// Enter once the input box shows the text, as a person would.
	deadline := time.Now().Add(10 * time.Second)
	for {
		screen, _ := d.tmux.Capture(context.Background(), d.claude.Pane, 0)
		if session.InputHolds(screen, text) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%q never showed in the desk's input box:\n%s", text, screen)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := d.tmux.SendKeys(context.Background(), d.claude.Pane, tmux.KeyEnter); err != nil {
		t.Fatal(err)
	}
}

func (d *desk) alive() bool {
	panes, _ := d.tmux.ListPanes(context.Background())
	for _, p := range panes {
		if p.ID == d.claude.Pane && !p.Dead {
			return true
		}
	}
	return false
}

// clickFor clicks the button whose custom_id holds part and returns the
// thread the answer links to.
func (b *bridge) clickFor(msg *fakediscord.Message, part string) string {
	b.t.Helper()
	var id string
	for _, c := range msg.CustomIDs() {
		if strings.Contains(c, part) {
			id = c
		}
	}
	if id == "" {
		b.t.Fatalf("no %q button on %q (%q)", part, msg.Content, msg.CustomIDs())
	}
	it := b.srv.Click(msg.ID, id, b.owner)
	r := b.srv.WaitResponse(it, 5*time.Second)
	answer := b.srv.WaitMessage(long, "the answer to "+part, func(m *fakediscord.Message) bool {
		return m.ID == r.OriginalID && (strings.Contains(m.Content, "<#") || strings.Contains(m.Content, "⚠️"))
	})
	if strings.Contains(answer.Content, "⚠️") {
		b.t.Fatalf("%s: %s", part, answer.Content)
	}
	return linkedThread(b.t, answer.Content)
}

func linkedThread(t testing.TB, s string) string {
	t.Helper()
	_, rest, ok := strings.Cut(s, "<#")
	id, _, ok2 := strings.Cut(rest, ">")
	if !ok || !ok2 || id == "" {
		t.Fatalf("no thread link in %q", s)
	}
	return id
}

// liveOf waits for the hooks' record of the Claude running in dir.
func (b *bridge) liveOf(dir string, pred func(state.Live) bool) state.Live {
	b.t.Helper()
	deadline := time.Now().Add(long)
	for time.Now().Before(deadline) {
		all, _ := b.store.Live.List()
		for _, l := range all {
			if l.Cwd == dir && pred(l) {
				return l
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	all, _ := b.store.Live.List()
	b.t.Fatalf("no live record for %s as wanted: %+v", dir, all)
	return state.Live{}
}

// 1–3. A Claude started by hand in the user's own tmux server shows up in
// /sessions; Take over binds it to a thread where messages reach it, its
// replies and prompt cards come back; archiving the thread releases it and
// leaves the pane running.
func TestTakeOverHandStartedSession(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	home := installHooks(t, b)
	d := startDesk(t, b, home, p.dir)
	d.typeAtDesk(t, "typed at the desk")
	b.waitReply(p, "ok: typed at the desk")
	live := b.liveOf(p.dir, func(l state.Live) bool { return l.FirstPrompt == "typed at the desk" && !l.Busy })
	if live.Pane != d.claude.Pane || !strings.Contains(live.Socket, "ccbe2e-user-") {
		t.Fatalf("live record %+v; the desk's pane is %s", live, d.claude.Pane)
	}

	list := b.command(p, "sessions", nil, "Running Claude sessions")
	if !strings.Contains(list.Content, "started by hand, pane `"+d.claude.Pane+"` — idle") || !strings.Contains(list.Content, "typed at the desk") {
		t.Fatalf("/sessions = %q", list.Content)
	}
	threadID := b.clickFor(list, "|ss|take|")
	th := threadOf(p, threadID)
	b.waitReply(th, "Took over the Claude running by hand")
	if c, ok := b.srv.Channel(threadID); !ok || c.Name != "typed at the desk" {
		t.Fatalf("thread %+v, want it named after the first prompt", c)
	}

	m := b.say(th, "from the phone")
	b.waitReply(th, "ok: from the phone")
	b.waitReaction(m, "✅")
	if screen, _ := d.tmux.Capture(context.Background(), d.claude.Pane, 200); !strings.Contains(screen, "from the phone") {
		t.Fatalf("the message is not in the desk's pane:\n%s", screen)
	}
	if n := len(b.panes()); n != 0 {
		t.Fatalf("the take-over started %d Claude(s) on the bridge's server", n)
	}

	b.model.Script("SCN_DESKTOUCH", fakemodel.Tool("", "Bash", map[string]any{"command": "touch from-desk.txt && echo desk-touched", "description": "Touch a file"}))
	b.say(th, "SCN_DESKTOUCH")
	card := b.waitCard(th, "the Bash card in the thread", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "touch from-desk.txt") })
	b.srv.Click(card.ID, action(t, card, "allow"), b.owner)
	b.waitReply(th, "Done. Last tool result: desk-touched")
	for _, msg := range b.botMessages(p.channel) {
		if strings.Contains(msg.Content, "from the phone") || strings.Contains(msg.Content, "desk-touched") {
			t.Fatalf("a taken-over reply landed in the channel: %q", msg.Content)
		}
	}

	b.srv.ArchiveThread(threadID, false)
	b.liveOf(p.dir, func(l state.Live) bool { return l.Bound == "" && l.ClaudeSessionID == live.ClaudeSessionID })
	if !d.alive() {
		t.Fatal("archiving the thread ended the user's pane")
	}
	d.claude.WaitReady(t, 10*time.Second)
	// Released: what is typed at the desk is posted in the channel again.
	d.typeAtDesk(t, "back at the desk")
	b.waitReply(p, "ok: back at the desk")
	// Listed as the user's again, to be taken over anew.
	again := b.command(p, "sessions", nil, "Recent conversations")
	if !strings.Contains(again.Content, "started by hand, pane `"+d.claude.Pane+"`") || !slices.ContainsFunc(again.CustomIDs(), func(id string) bool { return strings.Contains(id, "|ss|take|") }) {
		t.Fatalf("/sessions after the release = %q %q", again.Content, again.CustomIDs())
	}
}

// A taken-over Claude that exits in its terminal is reported in its
// thread, and later messages there are not typed into the pane.
func TestTakenOverClaudeThatEndsIsReported(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	d := startDesk(t, b, installHooks(t, b), p.dir)
	d.typeAtDesk(t, "short session")
	b.waitReply(p, "ok: short session")
	b.liveOf(p.dir, func(l state.Live) bool { return !l.Busy })
	th := threadOf(p, b.clickFor(b.command(p, "sessions", nil, "started by hand"), "|ss|take|"))
	b.waitReply(th, "Took over the Claude")
	d.claude.WaitReady(t, 10*time.Second)
	d.typeAtDesk(t, "/exit")
	b.waitReply(th, "has ended in its terminal")
	m := b.say(th, "anyone there")
	b.waitReply(th, "is gone")
	b.waitReaction(m, "⚠️")
}

// modelSaw waits for the request that carries text as the typed prompt and
// reports whether its messages hold earlier.
func modelSaw(t *testing.T, b *bridge, text, earlier string) bool {
	t.Helper()
	r := b.model.WaitRequest(t, long, "a request for "+text, func(r fakemodel.Request) bool { return strings.Contains(r.LastUserText, text) })
	raw, _ := json.Marshal(r.Body["messages"])
	return strings.Contains(string(raw), earlier)
}

// waitSessionID waits until a session record has a Claude session id.
func (b *bridge) waitSessionID(key string) string {
	b.t.Helper()
	deadline := time.Now().Add(long)
	for time.Now().Before(deadline) {
		if s, err := b.store.Sessions.Get(key); err == nil && s.ClaudeSessionID != "" {
			return s.ClaudeSessionID
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.t.Fatalf("session %s never got a Claude session id", key)
	return ""
}

// 4–5. A finished conversation is listed; Resume continues it in a thread
// (same session id, the model sees the earlier turns); Fork continues a copy
// (a new session id, the earlier turns).
func TestResumeAndForkPastConversation(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	home := installHooks(t, b)
	d := startDesk(t, b, home, p.dir)
	d.typeAtDesk(t, "remember the word pelican")
	b.waitReply(p, "ok: remember the word pelican")
	d.claude.WaitReady(t, 10*time.Second)
	d.typeAtDesk(t, "/exit")
	live := b.liveOf(p.dir, func(l state.Live) bool { return l.Ended })
	orig := live.ClaudeSessionID

	list := b.command(p, "sessions", nil, "Recent conversations")
	if !strings.Contains(list.Content, "“remember the word pelican” — 1 turn(s)") {
		t.Fatalf("/sessions = %q", list.Content)
	}
	resumed := threadOf(p, b.clickFor(list, "|ss|resume|"))
	b.waitReply(resumed, "Resumed the conversation")
	b.say(resumed, "what was the word")
	b.waitReply(resumed, "ok: what was the word")
	if !modelSaw(t, b, "what was the word", "remember the word pelican") {
		t.Fatal("the resumed conversation did not carry the earlier turn")
	}
	if id := b.waitSessionID(resumed.key); id != orig {
		t.Fatalf("resumed as %s, want the same session %s", id, orig)
	}

	forked := threadOf(p, b.clickFor(list, "|ss|fork|"))
	b.waitReply(forked, "Forked the conversation")
	b.say(forked, "fork asks the word")
	b.waitReply(forked, "ok: fork asks the word")
	if !modelSaw(t, b, "fork asks the word", "remember the word pelican") {
		t.Fatal("the fork did not carry the earlier turn")
	}
	if id := b.waitSessionID(forked.key); id == orig || id == "" {
		t.Fatalf("the fork has session id %q; the original is %s", id, orig)
	}
}

// 6. /fork in a channel with a live session forks its conversation into a
// thread; the channel's session (pane and conversation) is untouched.
func TestForkCommandLeavesTheChannelAlone(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	b.say(p, "main line idea")
	b.waitReply(p, "ok: main line idea")
	before, _ := b.store.Sessions.Get(p.key)
	answer := b.command(p, "fork", map[string]any{"prompt": "try the other idea"}, "Forked this conversation")
	th := threadOf(p, linkedThread(t, answer.Content))
	b.waitReply(th, "ok: try the other idea")
	if !modelSaw(t, b, "try the other idea", "main line idea") {
		t.Fatal("the fork did not carry the channel's conversation")
	}
	if id := b.waitSessionID(th.key); id == before.ClaudeSessionID {
		t.Fatal("the fork shares the channel's session id")
	}
	b.say(p, "main line continues")
	b.waitReply(p, "ok: main line continues")
	if modelSaw(t, b, "main line continues", "try the other idea") {
		t.Fatal("the fork's turn leaked into the channel's conversation")
	}
	after, _ := b.store.Sessions.Get(p.key)
	if after.ClaudeSessionID != before.ClaudeSessionID || after.PaneID != before.PaneID {
		t.Fatalf("the channel's session changed: %+v → %+v", before, after)
	}
	if !slices.ContainsFunc(b.panes(), func(pn tmux.Pane) bool { return pn.ID == before.PaneID }) {
		t.Fatal("the channel's pane is gone")
	}
}

// 5. Resume here: an idle channel's session continues a past conversation
// instead of its own (which ends with /exit and stays in Claude's records).
func TestResumeHereInTheChannel(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	d := startDesk(t, b, installHooks(t, b), p.dir)
	d.typeAtDesk(t, "remember the word heron")
	b.waitReply(p, "ok: remember the word heron")
	d.claude.WaitReady(t, 10*time.Second)
	d.typeAtDesk(t, "/exit")
	orig := b.liveOf(p.dir, func(l state.Live) bool { return l.Ended }).ClaudeSessionID
	b.say(p, "the channel's own line")
	b.waitReply(p, "ok: the channel's own line")
	before := b.waitSessionID(p.key)

	list := b.command(p, "sessions", nil, "“remember the word heron”")
	var id string
	for _, c := range list.CustomIDs() {
		if strings.Contains(c, "|ss|here|") {
			id = c
		}
	}
	it := b.srv.Click(list.ID, id, b.owner)
	r := b.srv.WaitResponse(it, 5*time.Second)
	b.srv.WaitMessage(long, "the answer to Resume here", func(m *fakediscord.Message) bool {
		return m.ID == r.OriginalID && strings.Contains(m.Content, "in this channel")
	})
	b.say(p, "channel asks the word")
	b.waitReply(p, "ok: channel asks the word")
	if !modelSaw(t, b, "channel asks the word", "remember the word heron") || modelSaw(t, b, "channel asks the word", "the channel's own line") {
		t.Fatal("the channel did not continue the chosen conversation (alone)")
	}
	deadline := time.Now().Add(long)
	for {
		s, _ := b.store.Sessions.Get(p.key)
		if s.ClaudeSessionID == orig {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("channel session id %s, want %s (was %s)", s.ClaudeSessionID, orig, before)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A conversation held in a subdirectory of the project resumes there (Claude
// keeps its records by directory).
func TestResumeConversationOfASubdirectory(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	sub := filepath.Join(p.dir, "sub")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	d := startDesk(t, b, installHooks(t, b), sub)
	d.typeAtDesk(t, "remember the word osprey")
	b.waitReply(p, "ok: remember the word osprey")
	d.claude.WaitReady(t, 10*time.Second)
	d.typeAtDesk(t, "/exit")
	orig := b.liveOf(sub, func(l state.Live) bool { return l.Ended }).ClaudeSessionID
	list := b.command(p, "sessions", nil, "“remember the word osprey”")
	resumed := threadOf(p, b.clickFor(list, "|ss|resume|"))
	b.say(resumed, "osprey thread asks")
	b.waitReply(resumed, "ok: osprey thread asks")
	if !modelSaw(t, b, "osprey thread asks", "remember the word osprey") {
		t.Fatal("the conversation of the subdirectory was not resumed")
	}
	if id := b.waitSessionID(resumed.key); id != orig {
		t.Fatalf("resumed as %s, want %s", id, orig)
	}
}

// /fork without a prompt, inside a thread: the fork starts at once in a new
// thread under the project channel and carries the thread's conversation.
func TestForkCommandInAThreadWithoutPrompt(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	th := threadOf(p, b.srv.StartThread(p.channel, "side line", b.owner))
	b.say(th, "side line idea")
	b.waitReply(th, "ok: side line idea")
	orig := b.waitSessionID(th.key)
	answer := b.command(th, "fork", nil, "Forked this conversation")
	fork := threadOf(p, linkedThread(t, answer.Content))
	if c, ok := b.srv.Channel(fork.channel); !ok || c.ParentID != p.channel {
		t.Fatalf("fork thread %+v, want it under the project channel", c)
	}
	// Started without a message: its Claude reports a session id of its own.
	deadline := time.Now().Add(long)
	for {
		if s, err := b.store.Sessions.Get(fork.key); err == nil && s.ClaudeSessionID != "" && s.ClaudeSessionID != orig {
			break
		}
		if time.Now().After(deadline) {
			s, _ := b.store.Sessions.Get(fork.key)
			t.Fatalf("the fork never started with a session of its own: %+v", s)
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.say(fork, "fork continues")
	b.waitReply(fork, "ok: fork continues")
	if !modelSaw(t, b, "fork continues", "side line idea") {
		t.Fatal("the fork did not carry the thread's conversation")
	}
}

// A message from the thread never wipes what the person has typed but not
// sent in their own terminal: it is not typed, and the thread is told.
func TestTakenOverTerminalsDraftIsKept(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	d := startDesk(t, b, installHooks(t, b), p.dir)
	d.typeAtDesk(t, "before the draft")
	b.waitReply(p, "ok: before the draft")
	b.liveOf(p.dir, func(l state.Live) bool { return !l.Busy })
	th := threadOf(p, b.clickFor(b.command(p, "sessions", nil, "started by hand"), "|ss|take|"))
	b.waitReply(th, "Took over the Claude")
	d.claude.WaitReady(t, 10*time.Second)
	draft := "half a sentence of my own"
	if err := d.tmux.PasteTextIf(context.Background(), d.claude.Pane, tmux.Guard{}, draft); err != nil {
		t.Fatal(err)
	}
	waitScreen(t, d.tmux, d.claude.Pane, draft)
	m := b.say(th, "from the phone over a draft")
	b.waitReply(th, "the terminal has a draft")
	b.waitReaction(m, "⚠️")
	screen, _ := d.tmux.Capture(context.Background(), d.claude.Pane, 0)
	if !session.InputHolds(screen, draft) || strings.Contains(screen, "from the phone over a draft") {
		t.Fatalf("the draft was touched:\n%s", screen)
	}
}
