//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
	"github.com/ccbridge/ccbridge/internal/testutil/fakemodel"
)

// threadOf is a thread of a project, as a project of its own for helpers.
func threadOf(p *project, threadID string) *project {
	return &project{bot: p.bot, name: p.name, channel: threadID, dir: p.dir, key: session.ThreadKey(p.bot.Name, p.name, threadID)}
}

// 1. A message in a thread starts a second session; its reply lands in the
// thread; the channel's session is untouched.
func TestThreadHasItsOwnSession(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	b.say(p, "in the channel")
	b.waitReply(p, "ok: in the channel")
	th := threadOf(p, b.srv.StartThread(p.channel, "side quest", b.owner))
	m := b.say(th, "in the thread")
	b.waitReply(th, "ok: in the thread")
	b.waitReaction(m, "✅")
	if n := len(b.panes()); n != 2 {
		t.Fatalf("%d panes, want the channel's and the thread's", n)
	}
	for _, msg := range b.botMessages(p.channel) {
		if strings.Contains(msg.Content, "in the thread") {
			t.Fatal("the thread's reply landed in the channel")
		}
	}
	ch, _ := b.store.Sessions.Get(p.key)
	tr, _ := b.store.Sessions.Get(th.key)
	if ch.ClaudeSessionID == "" || ch.ClaudeSessionID == tr.ClaudeSessionID || tr.ThreadID != th.channel {
		t.Fatalf("channel session %+v, thread session %+v", ch, tr)
	}
}

// 2. Six threads of one project run at once, each answered in its own thread.
func TestSixThreadsAtOnce(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	var threads []*project
	for i := range 6 {
		threads = append(threads, threadOf(p, b.srv.StartThread(p.channel, fmt.Sprintf("t%d", i), b.owner)))
	}
	for i, th := range threads {
		b.say(th, fmt.Sprintf("thread number %d", i))
	}
	for i, th := range threads {
		b.waitReply(th, fmt.Sprintf("ok: thread number %d", i))
	}
	time.Sleep(time.Second)
	for i, th := range threads {
		for _, msg := range b.botMessages(th.channel) {
			if !strings.Contains(msg.Content, fmt.Sprintf("thread number %d", i)) {
				t.Errorf("thread %d got %q", i, msg.Content)
			}
		}
	}
	if n := len(b.panes()); n != 6 {
		t.Errorf("%d panes, want 6", n)
	}
}

// 5. After the daemon and its panes are gone (as after a reboot), the
// thread's next message continues the same Claude conversation.
func TestThreadResumesAfterRestart(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	th := threadOf(p, b.srv.StartThread(p.channel, "long running", b.owner))
	b.say(th, "remember the word pineapple")
	b.waitReply(th, "ok: remember the word pineapple")
	before, _ := b.store.Sessions.Get(th.key)
	deadline := time.Now().Add(long)
	for {
		if reg, _ := registry(t, b).Sessions.Get(th.key); reg.ClaudeSessionID == before.ClaudeSessionID && reg.ClaudeSessionID != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the conversation was never remembered")
		}
		time.Sleep(100 * time.Millisecond)
	}
	b.kill()
	if err := b.tmux.KillServer(context.Background()); err != nil {
		t.Fatal(err)
	}
	b.start()
	b.say(th, "what was the word?")
	r := b.model.WaitRequest(t, long, "the resumed conversation", func(r fakemodel.Request) bool { return r.LastUserText == "what was the word?" })
	if body := fmt.Sprint(r.Body["messages"]); !strings.Contains(body, "remember the word pineapple") {
		t.Fatalf("the resumed request does not carry the earlier conversation: %.300s", body)
	}
	b.waitReply(th, "ok: what was the word?")
	after, _ := b.store.Sessions.Get(th.key)
	if after.ClaudeSessionID != before.ClaudeSessionID || after.StartSource != "resume" {
		t.Fatalf("after restart: Claude session %s (SessionStart source %q), want %s (resume)", after.ClaudeSessionID, after.StartSource, before.ClaudeSessionID)
	}
}

// /thread starts a thread with its prompt; archiving the thread stops its pane.
func TestThreadCommandAndArchive(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	it := b.srv.Command(p.channel, "thread", b.owner, map[string]any{"name": "fix the parser", "prompt": "look at the parser"})
	b.srv.WaitResponse(it, 5*time.Second)
	var threadID string
	deadline := time.Now().Add(10 * time.Second)
	for threadID == "" && time.Now().Before(deadline) {
		for _, c := range b.srv.Threads(p.channel) {
			if c.Name == "fix the parser" {
				threadID = c.ID
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if threadID == "" {
		t.Fatal("/thread made no thread")
	}
	th := threadOf(p, threadID)
	b.waitReply(th, "ok: look at the parser")
	if n := len(b.panes()); n != 1 {
		t.Fatalf("%d panes, want the thread's", n)
	}
	b.srv.ArchiveThread(threadID, false)
	deadline = time.Now().Add(long)
	for len(b.panes()) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the archived thread's pane is still running")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// registry opens the bridge's durable registry.
func registry(t *testing.T, b *bridge) *state.Registry {
	t.Helper()
	reg, err := state.OpenRegistry(filepath.Join(b.stateDir, "ccbridge"))
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// Security review 2, finding 12: deleting a thread (Manage Threads, as for
// archiving) mid-turn does not cut the turn off: the command runs to its
// end, and the session stops after it.
func TestThreadDeletedMidTurnStopsAfterTheTurn(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	th := threadOf(p, b.srv.StartThread(p.channel, "long job", b.owner))
	started, release, finished := filepath.Join(p.dir, "started"), filepath.Join(p.dir, "release"), filepath.Join(p.dir, "finished")
	cmd := fmt.Sprintf("touch %s; while [ ! -e %s ]; do sleep 0.05; done; touch %s", started, release, finished)
	b.model.Script("SCN_DELETED", fakemodel.Tool("", "Bash", map[string]any{"command": cmd, "description": "Long job"}))
	b.say(th, "SCN_DELETED")
	card := b.waitCard(th, "the long job's card", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "Long job") })
	b.srv.Click(card.ID, action(t, card, "allow"), b.owner)
	waitFile(t, started)
	b.srv.DeleteThread(th.channel)
	time.Sleep(3 * time.Second) // a daemon that stops at once has done so by now
	if n := len(b.panes()); n != 1 {
		t.Fatalf("%d panes: the deleted thread's session was stopped mid-turn", n)
	}
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	waitFile(t, finished)
	deadline := time.Now().Add(long)
	for len(b.panes()) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the deleted thread's session still runs after its turn")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
