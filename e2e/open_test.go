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
	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
)

// withOpenRoots restarts the bridge with open_roots = [root] (and more
// keys) for its first server; the root is under the project's folder, so Claude trusts the
// folders in it as it trusts the project.
func withOpenRoots(t *testing.T, b *bridge, p *project, more string) string {
	t.Helper()
	root := filepath.Join(p.dir, "src")
	for _, d := range []string{"tool", "web"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	owners := fmt.Sprintf("owner_ids = [%q]\n", b.owner.ID)
	b.reconfigure(func(cfg string) string {
		return strings.Replace(cfg, owners, owners+fmt.Sprintf("open_roots = [%q]\n", root)+more, 1)
	})
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

// answer waits for the bot's answer to an interaction in a channel that
// contains want.
func (b *bridge) answer(channel, want string) *fakediscord.Message {
	b.t.Helper()
	return b.srv.WaitMessage(long, fmt.Sprintf("an answer with %q", want), func(m *fakediscord.Message) bool {
		return m.ChannelID == channel && m.Author.Bot && strings.Contains(m.Content, want)
	})
}

// openedThread waits for the thread /open made, by name.
func openedThread(t *testing.T, b *bridge, p *project, parent, name string) *project {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, c := range b.srv.Threads(parent) {
			if c.Name == name {
				return &project{bot: p.bot, name: name, channel: c.ID, key: session.ThreadKey(p.bot.Name, session.OpenedProject, c.ID)}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("/open made no thread %q", name)
	return nil
}

// /open suggests the folders under the roots, opens one in a thread whose
// Claude runs in that folder and answers; the thread survives a restart
// (a reboot's, with the panes gone too), and what it got meanwhile is
// delivered; /close stops its Claude and forgets it.
func TestOpenFolderInAThread(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	root := withOpenRoots(t, b, p, "")

	ac := b.srv.Autocomplete(p.channel, "open", b.owner, nil, "path", "too")
	r := b.srv.WaitResponse(ac, 5*time.Second)
	if r.Late || r.ResponseType != 8 || len(r.Choices()) != 1 || !strings.HasSuffix(r.Choices()[0]["value"].(string), "/src/tool") {
		t.Fatalf("suggestions for too: late=%v type=%d %v", r.Late, r.ResponseType, r.Choices())
	}

	it := b.srv.Command(p.channel, "open", b.owner, map[string]any{"path": "tool"})
	b.srv.WaitResponse(it, 5*time.Second)
	dir := filepath.Join(root, "tool")
	b.answer(p.channel, "📂 Opened `"+dir+"`")
	th := openedThread(t, b, p, p.channel, "tool")
	b.waitReply(th, "🟢 Claude is running in `"+dir+"`")
	m := b.say(th, "hello from the phone")
	b.waitReply(th, "ok: hello from the phone")
	b.waitReaction(m, "✅")
	if s, err := b.store.Sessions.Get(th.key); err != nil || s.Cwd != dir || s.ThreadID != th.channel {
		t.Fatalf("session %+v, %v; want one in %s", s, err, dir)
	}
	for _, msg := range b.botMessages(p.channel) {
		if strings.Contains(msg.Content, "hello from the phone") {
			t.Fatal("the opened thread's reply landed in the channel")
		}
	}

	b.kill()
	if err := b.tmux.KillServer(context.Background()); err != nil {
		t.Fatal(err)
	}
	b.say(th, "sent while ccbridge was down")
	b.start()
	b.waitReply(th, "ok: sent while ccbridge was down")
	b.say(th, "still there after the restart?")
	b.waitReply(th, "ok: still there after the restart?")
	if s, _ := b.store.Sessions.Get(th.key); s.Cwd != dir {
		t.Fatalf("after the restart Claude runs in %q, want %s", s.Cwd, dir)
	}
	if _, err := registry(t, b).Opened.Get(th.channel); err != nil {
		t.Fatalf("the opened folder is not remembered: %v", err)
	}

	cl := b.srv.Command(th.channel, "close", b.owner, nil)
	b.srv.WaitResponse(cl, 5*time.Second)
	b.answer(th.channel, "📁 Closed `"+dir+"`")
	deadline := time.Now().Add(long)
	for len(b.panes()) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the closed folder's Claude still runs")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if o, _ := registry(t, b).Opened.Get(th.channel); !o.Closed {
		t.Fatalf("the closed folder is still open: %+v", o)
	}
	late := b.say(th, "anyone?")
	time.Sleep(3 * time.Second)
	if n := len(b.panes()); n != 0 {
		t.Fatalf("a message in the closed thread started %d pane(s)", n)
	}
	if cur, _ := b.srv.Message(late.ID); len(cur.Reactions) != 0 {
		t.Fatalf("a message in the closed thread was handled: %v", cur.Reactions)
	}
}

// /open refuses "..", a symlink out of the roots and a missing folder,
// saying why, and opens nothing.
func TestOpenRefusesPathsOutsideTheRoots(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	withOpenRoots(t, b, p, "")
	for path, why := range map[string]string{
		"tool/../..": `goes up a folder with ".."`,
		"escape":     "outside the folders /open may open",
		"gone":       "does not exist",
	} {
		it := b.srv.Command(p.channel, "open", b.owner, map[string]any{"path": path})
		b.srv.WaitResponse(it, 5*time.Second)
		b.answer(p.channel, why)
	}
	if th := b.srv.Threads(p.channel); len(th) != 0 {
		t.Fatalf("a refused /open made threads: %v", th)
	}
	if n := len(b.panes()); n != 0 {
		t.Fatalf("a refused /open started %d pane(s)", n)
	}
}

// /open in the control-panel channel (no project's, and one every member
// can read) suggests and opens a folder there in a private thread that the
// owner alone sees, and the panel lists it with its state. Without Create
// Private Threads there, /open is refused, saying why (security-3 #3).
func TestOpenInThePanelChannel(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	general := b.srv.AddChannel(p.bot.GuildID, "general")
	root := withOpenRoots(t, b, p, fmt.Sprintf("general_channel_id = %q\n", general))
	stranger := b.srv.NewUser("stranger")
	if !b.srv.CanView(p.bot, general, stranger.ID) {
		t.Fatal("the panel channel is not one every member can read")
	}
	ac := b.srv.Autocomplete(general, "open", b.owner, nil, "path", "we")
	if r := b.srv.WaitResponse(ac, 5*time.Second); r.Late || len(r.Choices()) != 1 || !strings.HasSuffix(r.Choices()[0]["value"].(string), "/src/web") {
		t.Fatalf("suggestions in the panel channel: late=%v %v", r.Late, r.Choices())
	}
	it := b.srv.Command(general, "open", b.owner, map[string]any{"path": "web"})
	b.srv.WaitResponse(it, 5*time.Second)
	dir := filepath.Join(root, "web")
	th := openedThread(t, b, p, general, "web")
	if c, _ := b.srv.Channel(th.channel); c.Type != 12 || c.Invitable {
		t.Fatalf("the opened folder's thread: %+v, want a private one", c)
	}
	if !b.srv.CanView(p.bot, th.channel, b.owner.ID) || b.srv.CanView(p.bot, th.channel, stranger.ID) {
		t.Fatalf("the thread is not the owner's alone: members %q", b.srv.ThreadMembers(th.channel))
	}
	b.waitReply(th, "🟢 Claude is running in `"+dir+"`")
	b.say(th, "hello from the panel channel")
	b.waitReply(th, "ok: hello from the panel channel")
	b.srv.WaitMessage(long, "the panel listing the opened folder", func(m *fakediscord.Message) bool {
		return m.ChannelID == general && m.Author.Bot && strings.Contains(m.Content, "**Opened folders** (/open)\n🟢 running <#"+th.channel+"> `"+dir+"`")
	})

	b.srv.DenyBotInChannel(p.bot, general, fakediscord.PermCreatePrivateThreads)
	it = b.srv.Command(general, "open", b.owner, map[string]any{"path": "tool"})
	b.srv.WaitResponse(it, 5*time.Second)
	b.answer(general, "⚠️ Not opened: every member of this server can read this channel")
	for _, c := range b.srv.Threads(general) {
		if c.Name == "tool" {
			t.Fatalf("a refused /open made a thread: %+v", c)
		}
	}
}

// A folder Claude Code never trusted: its first start from /open posts the
// trust dialog in the new thread, for the owner to answer; once answered,
// Claude runs there and the thread drives it.
func TestOpenUntrustedFolderAsksTheOwner(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	root := filepath.Join(filepath.Dir(p.dir), "untrusted")
	if err := os.MkdirAll(filepath.Join(root, "fresh"), 0o755); err != nil {
		t.Fatal(err)
	}
	owners := fmt.Sprintf("owner_ids = [%q]\n", b.owner.ID)
	b.reconfigure(func(cfg string) string {
		return strings.Replace(cfg, owners, owners+fmt.Sprintf("open_roots = [%q]\n", root), 1)
	})
	it := b.srv.Command(p.channel, "open", b.owner, map[string]any{"path": "fresh"})
	b.srv.WaitResponse(it, 5*time.Second)
	th := openedThread(t, b, p, p.channel, "fresh")
	msg, yes := b.dialogChoice(th, "Quick safety check", "Yes, I trust this folder")
	b.answerDialog(msg, yes)
	real, err := filepath.EvalSymlinks(filepath.Join(root, "fresh"))
	if err != nil {
		t.Fatal(err)
	}
	b.waitReply(th, "🟢 Claude is running in `"+real+"`")
	b.say(th, "hello after trust")
	b.waitReply(th, "ok: hello after trust")
}
