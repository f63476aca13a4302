//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
	"github.com/ccbridge/ccbridge/internal/testutil/fakemodel"
)

var orderToken = regexp.MustCompile(`r\d\d-m\d\d`)

// userTokens returns the order tokens of the user messages of a model
// request, in the order Claude put them in the conversation.
func userTokens(r fakemodel.Request) []string {
	var out []string
	msgs, _ := r.Body["messages"].([]any)
	for _, msg := range msgs {
		m, _ := msg.(map[string]any)
		if m["role"] != "user" {
			continue
		}
		var text string
		switch c := m["content"].(type) {
		case string:
			text = c
		case []any:
			for _, b := range c {
				if bm, _ := b.(map[string]any); bm["type"] == "text" {
					s, _ := bm["text"].(string)
					text += s + "\n"
				}
			}
		}
		for _, tok := range orderToken.FindAllString(text, -1) {
			if !slices.Contains(out, tok) {
				out = append(out, tok)
			}
		}
	}
	return out
}

// logTranscript logs the transcript lines of the session that mention s.
func logTranscript(t *testing.T, b *bridge, p *project, s string) {
	rec, err := b.store.Sessions.Get(p.key)
	if err != nil {
		return
	}
	raw, _ := os.ReadFile(rec.TranscriptPath)
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.Contains(line, s) {
			t.Logf("transcript: %.300s", line)
		}
	}
}

// userTexts shows the user messages of a request, one a line.
func userTexts(r fakemodel.Request) string {
	var b strings.Builder
	msgs, _ := r.Body["messages"].([]any)
	for i, msg := range msgs {
		m, _ := msg.(map[string]any)
		if m["role"] != "user" {
			continue
		}
		fmt.Fprintf(&b, "  %d: %.400q\n", i, fmt.Sprint(m["content"]))
	}
	return b.String()
}

// Ten messages sent 200 ms apart reach Claude in the order they were sent,
// twenty rounds in a row in one session; then a round sent back to back.
func TestMessagesReachClaudeInOrder(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	var want []string
	const rounds = 21
	for round := range rounds {
		gap := 200 * time.Millisecond
		if round == rounds-1 {
			gap = 0 // a burst: the events reach the daemon back to back
		}
		var last *fakediscord.Message
		for i := range 10 {
			tok := fmt.Sprintf("r%02d-m%02d", round, i)
			want = append(want, tok)
			last = b.say(p, "message "+tok)
			if gap > 0 && i < 9 {
				time.Sleep(gap) // the pace of a person typing, not a wait for a result
			}
		}
		b.waitReaction(last, "✅")
		final := want[len(want)-1]
		r := b.model.WaitRequest(t, long, "the round's last message", func(r fakemodel.Request) bool {
			return slices.Contains(userTokens(r), final)
		})
		if got := userTokens(r); !slices.Equal(got, want) {
			logTranscript(t, b, p, fmt.Sprintf("r%02d-", round))
			t.Fatalf("round %d: Claude got the messages in the order\n%q\nwant\n%q\nconversation:\n%s", round, got, want, userTexts(r))
		}
	}
}

// Creating a thread in the Discord client posts a THREAD_CREATED message
// (content: the thread's name) in the project channel, renaming it posts
// the new name in the thread, a thread started from a message gets an
// empty starter message, and pins post empty messages: none of them
// reaches Claude or starts a session (or a worktree).
func TestSystemMessagesAreNotPrompts(t *testing.T) {
	t.Parallel()
	b, p := isolatedBridge(t)
	th := threadOf(p, b.srv.StartThread(p.channel, "please delete everything", b.owner))
	b.srv.RenameThread(th.channel, "rm -rf now", b.owner)
	b.srv.PostSystem(th.channel, b.owner, 6, "")
	m := b.say(p, "a real prompt")
	quiet := threadOf(p, b.srv.StartThreadFrom(m.ID, "from a message", b.owner))
	b.srv.PostSystem(quiet.channel, b.owner, 6, "")
	b.srv.PostSystem(p.channel, b.owner, 6, "")
	// Events of a channel are handled in order: the replies to these come
	// after everything above was handled in their channels.
	b.say(th, "now the thread")
	b.waitReply(th, "ok: now the thread")
	b.say(p, "second prompt")
	b.waitReply(p, "ok: second prompt")
	for _, r := range b.model.Requests() {
		body := fmt.Sprint(r.Body["messages"])
		for _, bad := range []string{"please delete everything", "rm -rf now", "from a message"} {
			if strings.Contains(body, bad) {
				t.Fatalf("a system message reached Claude: %q in %.300s", bad, body)
			}
		}
	}
	if reg, err := registry(t, b).Sessions.Get(quiet.key); err == nil && reg.Worktree != "" {
		t.Fatalf("a thread with only system messages got a worktree: %+v", reg)
	}
	if _, err := b.store.Sessions.Get(quiet.key); err == nil {
		t.Fatal("a thread with only system messages got a session")
	}
	if n := len(b.panes()); n != 2 {
		t.Fatalf("%d panes, want the channel's and the first thread's", n)
	}
}

// Discord auto-archives a quiet thread while Claude waits on a prompt in
// it: the session is not cut off; it stops when the turn ends, and the
// kept worktree is reported in the project channel, linking the thread.
func TestArchiveMidTurnStopsAfterTheTurn(t *testing.T) {
	t.Parallel()
	b, p := isolatedBridge(t)
	th := threadOf(p, b.srv.StartThread(p.channel, "mid turn", b.owner))
	b.model.Script("SCN_MID", fakemodel.Tool("", "Bash", map[string]any{"command": "touch mid.txt && pwd", "description": "Write in the worktree"}))
	b.say(th, "SCN_MID")
	card := b.waitCard(th, "the card", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "touch mid.txt") })
	b.srv.AutoArchive(th.channel)
	// The daemon says it will wait, or (wrongly) stops the session.
	deadline := time.Now().Add(long)
	for !strings.Contains(b.out.String(), "thread closed mid-turn") && b.paneAlive(th) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if !b.paneAlive(th) {
		t.Fatal("archiving the thread mid-turn stopped its session")
	}
	waitOutput(t, b.out, "thread closed mid-turn", time.Second)
	b.srv.Click(card.ID, action(t, card, "allow"), b.owner)
	b.waitReply(th, "Done. Last tool result: ")
	deadline = time.Now().Add(long)
	for b.paneAlive(th) {
		if time.Now().After(deadline) {
			t.Fatal("the archived thread's session still runs after its turn")
		}
		time.Sleep(100 * time.Millisecond)
	}
	kept := b.srv.WaitMessage(long, "the kept-worktree notice in the project channel", func(m *fakediscord.Message) bool {
		return m.ChannelID == p.channel && m.Author.Bot && strings.Contains(m.Content, "was kept")
	})
	if !strings.Contains(kept.Content, "<#"+th.channel+">") || !strings.Contains(kept.Content, "mid.txt") {
		t.Fatalf("notice = %q", kept.Content)
	}
	for _, m := range b.botMessages(th.channel) {
		if strings.Contains(m.Content, "was kept") {
			t.Fatalf("the notice was posted in the thread (un-archiving it): %q", m.Content)
		}
	}
	// Claude's reply un-archived the thread, as on Discord: it is archived
	// again.
	deadline = time.Now().Add(long)
	for c, _ := b.srv.Channel(th.channel); !c.Archived; c, _ = b.srv.Channel(th.channel) {
		if time.Now().After(deadline) {
			t.Fatal("the thread stays un-archived after the turn's reply")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// paneAlive reports whether the session of p has a live pane.
func (b *bridge) paneAlive(p *project) bool {
	rec, err := b.store.Sessions.Get(p.key)
	if err != nil || rec.PaneID == "" {
		return false
	}
	for _, pane := range b.panes() {
		if pane.ID == rec.PaneID {
			return true
		}
	}
	return false
}

// A deleted thread stops its session and treats its worktree as on
// archive: kept (it has work), reported in the project channel by name.
func TestDeletedThreadStopsAndKeepsItsWork(t *testing.T) {
	t.Parallel()
	b, p := isolatedBridge(t)
	th := threadOf(p, b.srv.StartThread(p.channel, "doomed", b.owner))
	b.model.Script("SCN_DEL", fakemodel.Tool("", "Bash", map[string]any{"command": "touch del.txt && pwd", "description": "Write in the worktree"}))
	b.say(th, "SCN_DEL")
	card := b.waitCard(th, "the card", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "touch del.txt") })
	b.srv.Click(card.ID, action(t, card, "allow"), b.owner)
	b.waitReply(th, "Done. Last tool result: ")
	reg, _ := registry(t, b).Sessions.Get(th.key)
	b.srv.DeleteThread(th.channel)
	kept := b.srv.WaitMessage(long, "the kept-worktree notice in the project channel", func(m *fakediscord.Message) bool {
		return m.ChannelID == p.channel && m.Author.Bot && strings.Contains(m.Content, "was kept")
	})
	if !strings.Contains(kept.Content, "deleted thread “doomed”") || !strings.Contains(kept.Content, "del.txt") {
		t.Fatalf("notice = %q", kept.Content)
	}
	if b.paneAlive(th) {
		t.Fatal("the deleted thread's session still runs")
	}
	if _, err := os.Stat(filepath.Join(reg.Worktree, "del.txt")); err != nil {
		t.Fatalf("the deleted thread's work is gone: %v", err)
	}
}
