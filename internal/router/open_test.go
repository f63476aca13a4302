package router

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/opened"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
)

const (
	panelChannel = "100000000000000004"
	openedID     = "100000000000000077" // the thread fakeReplier starts
)

// targetSessions records the targets sessions are started with.
type targetSessions struct {
	*fakeSessions
	mu      sync.Mutex
	targets []session.Target
}

func (s *targetSessions) Ensure(ctx context.Context, t session.Target) (string, bool, error) {
	s.mu.Lock()
	s.targets = append(s.targets, t)
	s.mu.Unlock()
	return s.fakeSessions.Ensure(ctx, t)
}

func (s *targetSessions) last(t *testing.T) session.Target {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.targets) == 0 {
		t.Fatal("no session was started")
	}
	return s.targets[len(s.targets)-1]
}

type openFixture struct {
	r     *Router
	rp    *fakeReplier
	ss    *targetSessions
	l     *log
	reg   *state.Registry
	cfg   *config.Config
	store *state.Store
	root  string // the open root, symlinks resolved
}

// newOpenRouter is a router whose server "home" may open folders under a
// root holding api/, web/, notes.txt, a symlink out of the root and one
// into api/.
func newOpenRouter(t *testing.T, roots bool) *openFixture {
	t.Helper()
	return newOpenRouterWith(t, roots, "", "")
}

// newOpenRouterWith is newOpenRouter with the project api at projectRel
// under the root ("" for a folder of its own) and more TOML for it.
func newOpenRouterWith(t *testing.T, roots bool, projectRel, projectTOML string) *openFixture {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	for _, d := range []string{"api/internal", "web", ".hidden"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "notes.txt"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "api"), filepath.Join(root, "api-link")); err != nil {
		t.Fatal(err)
	}
	projectPath := t.TempDir()
	if projectRel != "" {
		projectPath = filepath.Join(root, projectRel)
	}
	openRoots := ""
	if roots {
		openRoots = fmt.Sprintf("open_roots = [%q]", root)
	}
	cfg, err := config.Parse(fmt.Sprintf(`
[claude]
prompt_timeout = "1s"
[[servers]]
name = "home"
token_env = "X"
guild_id = "100000000000000001"
owner_ids = [%q]
general_channel_id = %q
%s
  [[servers.projects]]
  name = "api"
  channel_id = %q
  path = %q
%s
`, owner, panelChannel, openRoots, channel, projectPath, projectTOML))
	if err != nil {
		t.Fatal(err)
	}
	store, err := state.OpenStore(filepath.Join(t.TempDir(), "rt"))
	if err != nil {
		t.Fatal(err)
	}
	reg, err := state.OpenRegistry(filepath.Join(t.TempDir(), "durable"))
	if err != nil {
		t.Fatal(err)
	}
	f := &openFixture{cfg: cfg, store: store, reg: reg, root: root, l: &log{}}
	f.ss = &targetSessions{fakeSessions: &fakeSessions{l: f.l, receipts: 1}}
	f.r = f.start(t)
	return f
}

// start starts a router (again: a daemon restart) on the fixture's state.
func (f *openFixture) start(t *testing.T) *Router {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	f.rp = &fakeReplier{l: f.l, files: map[string][]byte{}}
	r := New(ctx, Options{Config: f.cfg, Sessions: f.ss, Replier: f.rp, Store: f.store, Registry: f.reg, Instance: "inst1"})
	t.Cleanup(func() {
		cancel()
		r.Wait()
		for _, m := range f.l.refused {
			t.Errorf("Discord would refuse: %s", m)
		}
	})
	return r
}

func (f *openFixture) command(channelID, parentID, name string, opts map[string]string) {
	f.r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: channelID, ParentID: parentID, User: chat.User{ID: owner}, Name: name, Options: opts}, fakeResponder{l: f.l})
}

// lastEdit is the latest answer to a deferred command.
func (f *openFixture) lastEdit(t *testing.T) string {
	t.Helper()
	ops := f.l.all()
	for i := len(ops) - 1; i >= 0; i-- {
		if strings.HasPrefix(ops[i], "edit ") || strings.HasPrefix(ops[i], "respond ") {
			return ops[i]
		}
	}
	t.Fatalf("no answer; ops = %q", ops)
	return ""
}

func TestOpenAutocomplete(t *testing.T) {
	f := newOpenRouter(t, true)
	ask := func(channelID, parentID, user string) []chat.Choice {
		return f.r.HandleAutocomplete(chat.AutocompleteEvent{Server: "home", ChannelID: channelID, ParentID: parentID, User: chat.User{ID: user}, Command: openName, Option: "path", Value: "we"})
	}
	for _, ch := range []string{channel, panelChannel} {
		if got := ask(ch, "", owner); len(got) != 1 || got[0].Value != f.root+"/web" {
			t.Errorf("in %s: %v", ch, got)
		}
	}
	if got := ask(channel, "", "100000000000000099"); got == nil || len(got) != 0 {
		t.Errorf("someone not an owner got %v", got)
	}
	if got := ask("100000000000000098", "", owner); got != nil {
		t.Errorf("a channel this daemon does not map got %v", got)
	}
}

func TestOpenStartsAThreadInTheFolder(t *testing.T) {
	f := newOpenRouter(t, true)
	f.command(channel, "", openName, map[string]string{"path": "api"})
	key := session.ThreadKey("home", session.OpenedProject, openedID)
	f.l.waitFor(t, "ensure "+key)
	f.l.waitFor(t, "send 🟢 Claude is running in `"+filepath.Join(f.root, "api")+"`. Write here to talk to it.")
	if got := f.l.all(); got[0] != "defer" || got[1] != "private-thread api members=["+owner+"]" {
		t.Fatalf("ops = %q", got)
	}
	if got := f.lastEdit(t); !strings.Contains(got, "📂 Opened `"+filepath.Join(f.root, "api")+"` in <#"+openedID+">") {
		t.Fatalf("answer: %s", got)
	}
	tt := f.ss.last(t)
	if tt.Dir != filepath.Join(f.root, "api") || tt.ThreadID != openedID || tt.ChannelID != channel || tt.Isolation != "none" ||
		tt.PermissionMode != f.cfg.Claude.PermissionMode || tt.Model != "" || tt.Progress != config.DefaultProgress {
		t.Fatalf("target = %+v", tt)
	}
	o, err := f.reg.Opened.Get(openedID)
	if err != nil || o.Path != filepath.Join(f.root, "api") || o.Owner != owner || o.ChannelID != channel {
		t.Fatalf("record = %+v, %v", o, err)
	}
	// A message in the thread goes to the folder's session, not to a
	// session of the channel's project.
	ev := msg("hello")
	ev.ChannelID, ev.ParentID = openedID, channel
	f.r.HandleMessage(ev)
	f.l.waitFor(t, `deliver `+key+` "hello"`)
}

func TestOpenWithAWorktree(t *testing.T) {
	f := newOpenRouter(t, true)
	f.command(panelChannel, "", openName, map[string]string{"path": "web", "isolation": "worktree"})
	f.l.waitFor(t, "ensure "+session.ThreadKey("home", session.OpenedProject, openedID))
	if tt := f.ss.last(t); tt.Isolation != "worktree" || tt.Dir != filepath.Join(f.root, "web") || tt.ChannelID != panelChannel {
		t.Fatalf("target = %+v", tt)
	}
}

func TestOpenRefusals(t *testing.T) {
	f := newOpenRouter(t, true)
	f.r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: channel, User: chat.User{ID: "100000000000000099"}, Name: openName,
		Options: map[string]string{"path": "api"}}, fakeResponder{l: f.l})
	if got := f.lastEdit(t); got != "respond ephemeral=true "+refusalForOthers {
		t.Errorf("someone not an owner: %s", got)
	}
	// A direct message has no server of ours: nothing is opened.
	f.r.HandleCommand(chat.CommandEvent{ChannelID: "100000000000000097", User: chat.User{ID: owner}, Name: openName,
		Options: map[string]string{"path": "api"}}, fakeResponder{l: f.l})
	for path, why := range map[string]string{
		"../..":     `goes up a folder with ".."`,
		"escape":    "outside the folders /open may open",
		"gone":      "does not exist",
		"notes.txt": "is a file, not a folder",
	} {
		f.command(channel, "", openName, map[string]string{"path": path})
		if got := f.lastEdit(t); !strings.Contains(got, "⚠️ Not opened: ") || !strings.Contains(got, why) {
			t.Errorf("%s: %s", path, got)
		}
	}
	f.command(openedID, channel, openName, map[string]string{"path": "api"})
	if got := f.lastEdit(t); !strings.Contains(got, "not inside a thread") {
		t.Errorf("in a thread: %s", got)
	}
	time.Sleep(50 * time.Millisecond)
	if slices.ContainsFunc(f.l.all(), func(op string) bool {
		return strings.HasPrefix(op, "thread ") || strings.HasPrefix(op, "private-thread ") || strings.HasPrefix(op, "ensure ")
	}) {
		t.Fatalf("a refused /open did something: %q", f.l.all())
	}
	if all, _ := f.reg.Opened.List(); len(all) != 0 {
		t.Fatalf("a refused /open was remembered: %v", all)
	}

	off := newOpenRouter(t, false)
	off.command(channel, "", openName, map[string]string{"path": "api"})
	if got := off.lastEdit(t); !strings.Contains(got, "/open is off") || !strings.Contains(got, "open_roots") {
		t.Errorf("without open_roots: %s", got)
	}
}

func TestOpenedThreadSurvivesARestart(t *testing.T) {
	f := newOpenRouter(t, true)
	f.command(channel, "", openName, map[string]string{"path": "api"})
	key := session.ThreadKey("home", session.OpenedProject, openedID)
	f.l.waitFor(t, "ensure "+key)
	again := f.start(t)
	ev := msg("after the restart")
	ev.ChannelID, ev.ParentID = openedID, channel
	again.HandleMessage(ev)
	f.l.waitFor(t, `deliver `+key+` "after the restart"`)
	if tt := f.ss.last(t); tt.Dir != filepath.Join(f.root, "api") {
		t.Fatalf("target = %+v", tt)
	}
}

func TestCloseForgetsTheFolder(t *testing.T) {
	f := newOpenRouter(t, true)
	f.command(channel, "", closeName, nil)
	if got := f.lastEdit(t); !strings.Contains(got, "Use /close in a thread opened with /open.") {
		t.Errorf("/close in a project channel: %s", got)
	}
	f.command(channel, "", openName, map[string]string{"path": "api"})
	key := session.ThreadKey("home", session.OpenedProject, openedID)
	f.l.waitFor(t, "ensure "+key)
	if _, err := f.reg.Sessions.Update(context.Background(), key, func(g *state.Registered) error { g.ClaudeSessionID = "abc-123"; return nil }); err != nil {
		t.Fatal(err)
	}
	f.command(openedID, channel, closeName, nil)
	f.l.waitFor(t, "stop "+key)
	if got := f.lastEdit(t); !strings.Contains(got, "📁 Closed `"+filepath.Join(f.root, "api")+"`") || !strings.Contains(got, "claude --resume abc-123") {
		t.Fatalf("answer: %s", got)
	}
	if o, err := f.reg.Opened.Get(openedID); err != nil || !o.Closed {
		t.Fatalf("record = %+v, %v", o, err)
	}
	if got := opened.Folders(f.reg, "home"); len(got) != 0 {
		t.Fatalf("still listed: %v", got)
	}
	// The thread is nobody's now: not the folder's, not the project's.
	n := len(f.l.all())
	ev := msg("still there?")
	ev.ChannelID, ev.ParentID = openedID, channel
	f.r.HandleMessage(ev)
	time.Sleep(50 * time.Millisecond)
	if got := f.l.all()[n:]; len(got) != 0 {
		t.Fatalf("a message in a closed thread did %q", got)
	}
}

func TestOpenedFoldersInSessions(t *testing.T) {
	f := newOpenRouter(t, true)
	f.command(channel, "", openName, map[string]string{"path": "web"})
	f.l.waitFor(t, "ensure "+session.ThreadKey("home", session.OpenedProject, openedID))
	reply := f.r.withOpened(chat.Reply{Content: "**Running Claude sessions**"}, "home")
	if want := "**Opened folders** (/open)\n<#" + openedID + "> `" + filepath.Join(f.root, "web") + "` — busy"; !strings.Contains(reply.Content, want) {
		t.Fatalf("listing:\n%s\nwant %q", reply.Content, want)
	}
	f.command(channel, "", "sessions", nil)
	if got := f.lastEdit(t); !strings.Contains(got, "**Opened folders** (/open)\n<#"+openedID+">") {
		t.Errorf("/sessions: %s", got)
	}
	if reply := f.r.withOpened(chat.Reply{Content: "x"}, "work"); reply.Content != "x" {
		t.Fatalf("another server's listing: %q", reply.Content)
	}
}

// An opened folder's thread archived mid-turn before a restart still
// stops once its turn is over, as any thread's.
func TestOpenedThreadArchivedBeforeARestartStops(t *testing.T) {
	f := newOpenRouter(t, true)
	f.command(channel, "", openName, map[string]string{"path": "api"})
	key := session.ThreadKey("home", session.OpenedProject, openedID)
	f.l.waitFor(t, "ensure "+key)
	f.r.remember(key, func(g *state.Registered) { g.Archived = true }) // what the old daemon recorded
	f.ss.setState("idle")
	again := f.start(t)
	again.FinishArchivedThreads()
	f.l.waitFor(t, "stop "+key)
}

// /status and /usage in an opened folder's thread answer for it, naming
// no made-up project; /usage counts the opened folders' sessions.
func TestStatusAndUsageInAnOpenedThread(t *testing.T) {
	f := newOpenRouter(t, true)
	f.command(channel, "", openName, map[string]string{"path": "api"})
	key := session.ThreadKey("home", session.OpenedProject, openedID)
	f.l.waitFor(t, "ensure "+key)
	if _, err := f.store.Sessions.Update(context.Background(), key, func(s *state.Session) error {
		s.Server, s.Project, s.ThreadID = "home", session.OpenedProject, openedID
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	f.command(openedID, channel, "usage", nil)
	if got := f.lastEdit(t); !strings.Contains(got, "**Usage — folders opened with /open**") || !strings.Contains(got, "thread <#"+openedID+">: no figures yet") {
		t.Errorf("/usage: %s", got)
	}
	f.command(openedID, channel, "status", nil)
	if got := f.lastEdit(t); !strings.Contains(got, "**folders opened with /open** — busy") || strings.Contains(got, session.OpenedProject) {
		t.Errorf("/status: %s", got)
	}
}

// What an opened folder's thread received while ccbridge was down is read
// back after READY like any live thread's; a closed one's is not.
func TestCatchUpReadsOpenedThreads(t *testing.T) {
	f := newOpenRouter(t, true)
	cursors, err := state.OpenCursors(f.reg.Dir)
	if err != nil {
		t.Fatal(err)
	}
	f.r.opt.History, f.r.opt.Cursors = &fakeHistory{}, cursors
	ctx := context.Background()
	for id, o := range map[string]state.Opened{
		"1300000000000000401": {Server: "home", ChannelID: panelChannel, ThreadID: "1300000000000000401", Path: f.root},
		"1300000000000000402": {Server: "home", ChannelID: channel, ThreadID: "1300000000000000402", Path: f.root, Closed: true},
		"1300000000000000403": {Server: "work", ChannelID: channel, ThreadID: "1300000000000000403", Path: f.root},
	} {
		if _, err := f.reg.Opened.Create(ctx, id, o); err != nil {
			t.Fatal(err)
		}
	}
	if got := f.r.CatchUpChannels("home"); len(got) != 1 || got[channel] != "" {
		t.Fatalf("CatchUpChannels = %v", got)
	}
	active := map[string]string{"1300000000000000401": panelChannel, "1300000000000000402": channel, "1300000000000000403": channel}
	if read, check := f.r.CatchUpThreads("home", active); len(read) != 3 || read["1300000000000000401"] != panelChannel || len(check) != 0 {
		t.Fatalf("active: read %v, check %v", read, check)
	}
	if read, check := f.r.CatchUpThreads("home", nil); len(read) != 0 || len(check) != 1 || check["1300000000000000401"] != panelChannel {
		t.Fatalf("not active: read %v, check %v", read, check)
	}
}

// A deleted thread of an opened folder stops its session, as any thread's,
// and the folder is forgotten: no panel line for a thread that is gone.
func TestDeletedOpenedThreadIsForgotten(t *testing.T) {
	f := newOpenRouter(t, true)
	f.command(channel, "", openName, map[string]string{"path": "api"})
	key := session.ThreadKey("home", session.OpenedProject, openedID)
	f.l.waitFor(t, "ensure "+key)
	f.ss.setState("idle")
	f.r.HandleThreadDeleted("home", openedID, channel)
	f.l.waitFor(t, "stop "+key)
	if o, err := f.reg.Opened.Get(openedID); err != nil || !o.Closed {
		t.Fatalf("record = %+v, %v", o, err)
	}
}

// The buttons of a kept worktree of an opened folder work where it was
// reported: the channel the folder was opened in (also once closed), and
// the thread; not in another channel.
func TestKeptWorktreeButtonsOfAnOpenedFolder(t *testing.T) {
	f := newOpenRouter(t, true)
	f.command(panelChannel, "", openName, map[string]string{"path": "api", "isolation": "worktree"})
	key := session.ThreadKey("home", session.OpenedProject, openedID)
	f.l.waitFor(t, "ensure "+key)
	if _, err := f.reg.Opened.Update(context.Background(), openedID, func(o *state.Opened) error { o.Closed = true; return nil }); err != nil {
		t.Fatal(err)
	}
	for ch, want := range map[string]bool{panelChannel: true, openedID: true, channel: false} {
		if got, ok := f.r.worktreeKey("home", ch, key); ok != want || (ok && got != key) {
			t.Errorf("in %s: %q, %v; want %v", ch, got, ok, want)
		}
	}
}

// A message queued for an opened folder's session before /close does not
// start its Claude again when its turn in the queue comes.
func TestQueuedMessageAfterCloseStartsNothing(t *testing.T) {
	f := newOpenRouter(t, true)
	f.command(channel, "", openName, map[string]string{"path": "api"})
	key := session.ThreadKey("home", session.OpenedProject, openedID)
	f.l.waitFor(t, "ensure "+key)
	queued, known := f.r.openedThread("home", openedID) // as a queued message holds it
	if !known || queued.key != key {
		t.Fatalf("opened thread = %+v, %v", queued, known)
	}
	f.command(openedID, channel, closeName, nil)
	f.l.waitFor(t, "stop "+key)
	if _, err := f.r.sessionTarget(queued); !errors.Is(err, opened.ErrClosed) {
		t.Fatalf("sessionTarget after /close = %v, want errFolderClosed", err)
	}
}

// An opened folder in a project's directory runs under that project's
// [policy]; a folder holding a project's directory is not opened: the
// project's rules would not hold there (security-3 #6).
func TestOpenedFolderGetsItsProjectsPolicyAndOneAroundAProjectIsRefused(t *testing.T) {
	f := newOpenRouterWith(t, true, "api", `  [servers.projects.policy]
  deny = ["Bash(git push *)"]`)
	f.command(channel, "", openName, map[string]string{"path": f.root})
	if got := f.lastEdit(t); !strings.Contains(got, "holds the project api (<#"+channel+">)") || !strings.Contains(got, "use its channel") {
		t.Errorf("/open around a project: %s", got)
	}
	if all, _ := f.reg.Opened.List(); len(all) != 0 {
		t.Fatalf("opened: %+v", all)
	}
	f.command(channel, "", openName, map[string]string{"path": "api/internal"})
	if got := f.lastEdit(t); !strings.Contains(got, "📂 Opened") || !strings.Contains(got, "the [policy] of the project api holds") {
		t.Errorf("/open in a project: %s", got)
	}
	f.l.waitFor(t, "ensure "+session.ThreadKey("home", session.OpenedProject, openedID))
	tg := f.ss.last(t)
	if p := f.cfg.SessionPolicy(tg.Server, tg.Project, tg.ThreadID, tg.Dir); !slices.Contains(p.Deny, "Bash(git push *)") {
		t.Errorf("the opened session's policy: %+v (target %+v)", p, tg)
	}
}
