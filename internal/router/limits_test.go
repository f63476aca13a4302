package router

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/execx"
	"github.com/ccbridge/ccbridge/internal/land"
	"github.com/ccbridge/ccbridge/internal/panel"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/worktree"
)

// Every message of these tests goes through chat.CheckMessage (the fakes
// of router_test.go): a deferred answer over 2,000 characters is refused
// by Discord (50035), and the person is left with "thinking…".

// stderr is what a failing git or tmux may print: pages.
func stderr(prog string) error {
	return &execx.CmdError{Args: []string{prog, "x"}, ExitCode: 1, Err: errors.New("exit status 1"),
		Stderr: strings.Repeat("error: one line of the many a failing command prints, say one per file\n", 400)}
}

// longStat is a diff stat of hundreds of files, with the untracked and
// ignored lines a kept worktree's stat ends with.
func longStat() string {
	var b strings.Builder
	for i := range 400 {
		fmt.Fprintf(&b, " src/some/deep/package/file_%03d.go | 12 ++++++------\n", i)
	}
	b.WriteString(" 400 files changed, 2400 insertions(+), 2400 deletions(-)\n")
	b.WriteString(" untracked: " + strings.Repeat("new/file.go, ", 300))
	return b.String()
}

type fakePanel struct{}

func (fakePanel) Render(context.Context, string) chat.Message {
	return chat.Message{Content: strings.Repeat("a project line of the panel\n", 71)}
}

// A thread session for each of a hundred threads: /usage lists what fits
// and says how many it left out, the channel's session first.
func TestUsageOfManyThreadsFits(t *testing.T) {
	r, _, _, l, store := newRouter(t)
	ctx := context.Background()
	ext, _ := state.OpenExtras(store.Dir)
	now := time.Now()
	store.Sessions.Update(ctx, "home-api", func(s *state.Session) error { s.Server, s.Project, s.ClaudeSessionID = "home", "api", "c"; return nil })
	for i := range 100 {
		key := fmt.Sprintf("home-api-t1000000000000001%02d", i)
		store.Sessions.Update(ctx, key, func(s *state.Session) error {
			s.Server, s.Project, s.ThreadID = "home", "api", key[len("home-api-t"):]
			if i%4 != 0 {
				s.ClaudeSessionID = fmt.Sprintf("c%d", i)
			}
			return nil
		})
		ext.Statuses.Update(ctx, fmt.Sprintf("c%d", i), func(s *state.Status) error {
			*s = state.Status{Model: "Opus 5.5", HasContext: true, ContextPct: 42, CostUSD: 12.25, LinesAdded: 5000, LinesRemoved: 1000,
				FiveHour: &state.Limit{UsedPct: 45, ResetsAt: now.Add(150 * time.Minute)}, SevenDay: &state.Limit{UsedPct: 12, ResetsAt: now.Add(100 * time.Hour)},
				At: now.Add(-time.Duration(i) * time.Minute)}
			return nil
		})
	}
	var reply chat.Reply
	r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, Name: "usage"}, drawn{fakeResponder{l: l}, &reply})
	if !strings.Contains(reply.Content, "more session(s) not shown") || !strings.Contains(reply.Content, "• channel session") {
		t.Fatalf("/usage = %q", reply.Content)
	}
	if !strings.Contains(reply.Content, "<#100000000000000101>") || strings.Contains(reply.Content, "<#100000000000000199>") {
		t.Errorf("/usage does not list the latest figures first: %q", reply.Content)
	}
}

// Git failing with pages of stderr: every landing command and button
// answers with the start of it.
func TestGitFailuresFit(t *testing.T) {
	r, _, rp, l, _ := newRouter(t)
	fl := &fakeLander{fail: stderr("git")}
	r.opt.Land = fl
	key := registerThread(t, r)
	if _, err := r.opt.Registry.Sessions.Update(context.Background(), key, func(g *state.Registered) error {
		g.Worktree, g.Repo, g.Branch, g.BaseCommit = t.TempDir(), t.TempDir(), "ccbridge/x", "base0"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	user := chat.User{ID: owner, Name: "o"}
	for _, ev := range []chat.CommandEvent{
		{Name: "diff"}, {Name: "commit", Options: map[string]string{"message": "m"}}, {Name: "merge"}, {Name: "discard"},
	} {
		ev.Server, ev.ChannelID, ev.ParentID, ev.User = "home", thread, channel, user
		r.HandleCommand(ev, fakeResponder{l: l})
	}
	r.HandleModal(l.submitDrawn(r, chat.ModalEvent{Server: "home", ChannelID: thread, User: user, CustomID: r.landID(key, "commit"), Values: map[string]string{"message": "m"}}), fakeResponder{l: l})
	click(r, l, thread, r.landID(key, "discard", "h"))
	click(r, l, thread, r.landID(key, "remove"))
	// The patch cannot be attached: Discord's error is quoted.
	fl.fail, fl.stat, rp.postErr = nil, longStat(), stderr("discord")
	r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: thread, ParentID: channel, User: user, Name: "diff"}, fakeResponder{l: l})
	n := 0
	for _, op := range l.all() {
		if strings.HasPrefix(op, "edit ⚠️") {
			n++
			if c := utf8.RuneCountInString(op); c > 600 {
				t.Errorf("an error answer of %d characters: %.300q", c, op)
			}
		}
	}
	if n != 7 || !strings.Contains(strings.Join(l.all(), "\n"), "Could not attach the patch: discord x: error:") {
		t.Fatalf("%d error answers: %q", n, l.all())
	}
}

// A kept worktree with hundreds of changed files and a long path: its
// notice, the question, and every outcome of its buttons fit, the question
// and outcomes whole.
func TestKeptWorktreeMessagesFit(t *testing.T) {
	r, ss, _, l, _ := newRouter(t)
	key := registerThread(t, r)
	ss.setState("idle")
	rel := session.Release{Path: "/src/" + strings.Repeat("deep/", 60) + "x-000050", Branch: "ccbridge/" + strings.Repeat("b", 150),
		Changes: worktree.Changes{Dirty: true, Ahead: 3, Ignored: []string{strings.Repeat("i", 200)}, DiffStat: longStat(), Fingerprint: "fp1"}}
	ss.releases = []session.Release{rel}
	r.HandleThreadArchived("home", thread, channel)
	r.waitClosed(t)
	var notice string
	for _, op := range l.all() {
		if s, ok := strings.CutPrefix(op, "post "+channel+" "); ok {
			notice = s
		}
	}
	if !strings.HasPrefix(notice, "📦 The worktree of <#"+thread+"> was kept") || !strings.Contains(notice, "more line(s) not shown") {
		t.Fatalf("notice = %q", notice)
	}
	press := func(content, action string) chat.Message {
		var m chat.Message
		r.HandleComponent(l.onDrawn(r, chat.ComponentEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, CustomID: r.wtID(key, action, "fp1"), Content: content}), updated{fakeResponder{l: l}, &m})
		return m
	}
	asked := press(notice, "delete")
	if !strings.HasSuffix(asked.Content, land.ConfirmDeleteQuestion) {
		t.Fatalf("question = %q", asked.Content)
	}
	ss.setState("stopped")
	changed := rel
	changed.Changes.Fingerprint = "fp2"
	ss.releases = []session.Release{changed}
	again := press(asked.Content, "confirm")
	if !strings.Contains(again.Content, "changed since you were asked") || strings.Count(again.Content, "```") != 2 {
		t.Fatalf("changed = %q", again.Content)
	}
	if !strings.HasSuffix(press(again.Content, "delete").Content, land.ConfirmDeleteQuestion) {
		t.Fatal("the question after a change is cut")
	}
	ss.fail = map[string]error{"ReleaseWorktree": stderr("git")}
	if failed := press(asked.Content, "confirm"); !strings.Contains(failed.Content, "Could not delete the worktree: git x: error:") {
		t.Fatalf("failure = %q", failed.Content)
	}
	// Archived again, the worktree cannot even be inspected.
	r.HandleThreadArchived("home", thread, channel)
	r.waitClosed(t)
	if !strings.Contains(strings.Join(l.all(), "\n"), "Could not clean up the worktree of <#"+thread+">: git x: error:") {
		t.Fatalf("ops = %q", l.all())
	}
}

// updated records what a button redrew its message with.
type updated struct {
	fakeResponder
	m *chat.Message
}

func (u updated) Update(m chat.Message) (string, error) { *u.m = m; return u.fakeResponder.Update(m) }
func (u updated) Edit(m chat.Reply) (string, error)     { *u.m = m; return u.fakeResponder.Edit(m) }

// tmux failing with pages of stderr, Claude failing to start with a full
// screen, a panel already full: every answer fits.
func TestSessionFailuresFit(t *testing.T) {
	r, ss, _, l, _ := newRouter(t)
	r.opt.Panel = fakePanel{}
	fail := stderr("tmux")
	ss.fail = map[string]error{"Status": fail, "InterruptTurn": fail, "Screen": fail, "SetMode": fail, "Stop": fail,
		"Ensure": &session.NotReadyError{Waited: time.Minute, Screen: strings.Repeat("a line of Claude's screen, a hundred columns wide …………………………………………………………………………………………\n", 50)}}
	for _, name := range []string{"status", "stop", "screen", "mode"} {
		r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, Name: name, Options: map[string]string{"mode": "plan"}}, fakeResponder{l: l})
	}
	click(r, l, channel, keyID(t, "home-api", "Escape", time.Now()))
	for _, action := range []string{"start", "stop"} {
		id, _ := chat.ID{Instance: "inst1", Kind: panel.IDKind, Args: []string{action, "api"}}.Encode()
		var m chat.Message
		r.HandleComponent(l.onDrawn(r, chat.ComponentEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, CustomID: id}), updated{fakeResponder{l: l}, &m})
		if !strings.Contains(m.Content, "⚠️ Could not "+action+" api") {
			t.Errorf("the panel lost its notice: %q", m.Content)
		}
	}
	r.HandleMessage(msg("hello"))
	start := ""
	for deadline := time.Now().Add(5 * time.Second); start == "" && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		for _, op := range l.all() {
			if strings.HasPrefix(op, "send ⚠️ Could not start Claude") {
				start = op
			}
		}
	}
	if !strings.Contains(start, "within 1m0s") || !strings.Contains(start, "Last lines of its screen") || !strings.HasSuffix(start, "\n```") {
		t.Fatalf("start failure = %q", start)
	}
}

// The replier's Send posts a long text in several messages: the notice of
// ten failed attachments names every one.
func TestLongNoticeReachesTheReplierWhole(t *testing.T) {
	r, _, rp, l, _ := newRouter(t)
	rp.downloadErr = errors.New("fetch failed: " + strings.Repeat("the CDN said no, ", 15))
	ev := msg("look")
	for i := range 10 {
		name := fmt.Sprintf("%02d-%s.txt", i, strings.Repeat("n", 90))
		ev.Attachments = append(ev.Attachments, chat.Attachment{Name: name, URL: "http://x/" + name, Size: 7})
	}
	r.HandleMessage(ev)
	l.waitFor(t, "react m1 ✅")
	var notice string
	for _, op := range l.all() {
		if strings.HasPrefix(op, "send ⚠️ Some attachments were not delivered") {
			notice = op
		}
	}
	if utf8.RuneCountInString(notice) <= chat.Limit {
		t.Fatalf("notice of %d characters, want more than one message's worth: %q", utf8.RuneCountInString(notice), notice)
	}
	for i := range 10 {
		if !strings.Contains(notice, fmt.Sprintf("%02d-nnn", i)) {
			t.Errorf("attachment %d not named in %q", i, notice)
		}
	}
}
