package router

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
)

const (
	schedThread  = "100000000000000055" // a thread of the api channel
	webChannel   = "100000000000000006"
	otherOwnerID = "100000000000000012"
)

// newScheduleRouter is a router with two projects, api and web, and the
// owner ids given.
func newScheduleRouter(t *testing.T, owners ...string) (*Router, *fakeSessions, *log) {
	t.Helper()
	quoted := make([]string, len(owners))
	for i, o := range owners {
		quoted[i] = fmt.Sprintf("%q", o)
	}
	cfg, err := config.Parse(fmt.Sprintf(`
[claude]
prompt_timeout = "1s"
[[servers]]
name = "home"
token_env = "X"
guild_id = "100000000000000001"
owner_ids = [%s]
  [[servers.projects]]
  name = "api"
  channel_id = %q
  path = %q
  [[servers.projects]]
  name = "web"
  channel_id = %q
  path = %q
`, strings.Join(quoted, ", "), channel, t.TempDir(), webChannel, t.TempDir()))
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
	l := &log{}
	ss := &fakeSessions{l: l, receipts: 1}
	ctx, cancel := context.WithCancel(context.Background())
	r := New(ctx, Options{Config: cfg, Sessions: ss, Replier: &fakeReplier{l: l, files: map[string][]byte{}}, Store: store, Registry: reg, Instance: "inst1"})
	t.Cleanup(func() {
		cancel()
		r.Wait()
		for _, m := range l.refused {
			t.Errorf("Discord would refuse: %s", m)
		}
	})
	return r, ss, l
}

func scheduleIn(channelID, parentID string, opts map[string]string) chat.CommandEvent {
	return chat.CommandEvent{Server: "home", ChannelID: channelID, ParentID: parentID, User: chat.User{ID: owner}, Name: "schedule", Options: opts}
}

// TestReview3ScheduleResurrectsADeletedThreadsSession: a deleted thread's
// schedule goes with it (said in the parent channel), and its session is
// not started again at the next run.
func TestReview3ScheduleResurrectsADeletedThreadsSession(t *testing.T) {
	r, ss, l := newScheduleRouter(t, owner)
	c := newClock(time.Date(2026, 11, 26, 8, 0, 0, 0, time.Local))
	r.now = c.now
	key := session.ThreadKey("home", "api", schedThread)
	r.remember(key, func(g *state.Registered) {
		g.Server, g.Project, g.ThreadID, g.ThreadName = "home", "api", schedThread, "nightly"
	})
	r.HandleCommand(scheduleIn(schedThread, channel, map[string]string{"when": "0 9 * * *", "prompt": "deploy the nightly build"}), fakeResponder{l: l})
	waitOp(t, l, "edit ⏰ Scheduled `0 9 * * *`")
	r.HandleThreadDeleted("home", schedThread, channel)
	notice := waitOp(t, l, "send 🗑")
	if !strings.Contains(notice, "the deleted thread “nightly”") || !strings.Contains(notice, "deploy the nightly build") {
		t.Errorf("notice = %q", notice)
	}
	if all := schedules(t, r); len(all) != 0 {
		t.Errorf("the deleted thread's schedule is kept: %+v", all)
	}
	// A schedule saved before this release, or a deletion missed while
	// ccbridge was down: the run is skipped, the session stays stopped.
	s := state.Schedule{Server: "home", ChannelID: schedThread, ParentID: channel, Prompt: "deploy the nightly build", When: "0 9 * * *",
		Cron: "0 9 * * *", Next: time.Date(2026, 11, 26, 9, 0, 0, 0, time.Local), Owner: owner}
	if _, err := r.opt.Registry.Schedules.Create(context.Background(), "old", s); err != nil {
		t.Fatal(err)
	}
	r.StartScheduler()
	c.add(time.Hour)
	r.wakeScheduler()
	skip := waitOp(t, l, "send ⏰ Skipped")
	if !strings.Contains(skip, "archived") {
		t.Errorf("skip notice = %q", skip)
	}
	time.Sleep(50 * time.Millisecond)
	if got := ss.deliveredNow(); len(got) != 0 {
		t.Errorf("delivered %q into a deleted thread's session", got)
	}
	if reg, _ := r.opt.Registry.Sessions.Get(key); !reg.Archived {
		t.Error("the deleted thread's session was un-archived")
	}
}

// TestReview3EveryOneSecondWithNewThreads: @every is refused, and a new
// thread (and Claude) each run needs runs at least five minutes apart.
func TestReview3EveryOneSecondWithNewThreads(t *testing.T) {
	r, _, l := newScheduleRouter(t, owner)
	for when, want := range map[string]string{
		"@every 1s":    "is not a time",
		"* * * * *":    "at least 5m0s apart",
		"0,2 9 * * *":  "at least 5m0s apart",
		"*/4 * * * *":  "at least 5m0s apart",
		"*/5 * * * *":  "⏰ Scheduled `*/5 * * * *`",
		"@hourly":      "⏰ Scheduled `@hourly`",
		"in 1m":        "⏰ Scheduled for",
		"0 9 * * 1-5 ": "⏰ Scheduled `0 9 * * 1-5`",
	} {
		l.mu.Lock()
		l.ops = nil
		l.mu.Unlock()
		r.HandleCommand(scheduleIn(channel, "", map[string]string{"when": when, "prompt": "p", "where": "new-thread"}), fakeResponder{l: l})
		if edit := waitOp(t, l, "edit "); !strings.Contains(edit, want) {
			t.Errorf("%q: %q, want %q", when, edit, want)
		}
	}
	if n := len(schedules(t, r)); n != 4 {
		t.Errorf("%d schedules saved, want 4", n)
	}
	// In this channel (no thread, no Claude started each time) a minute
	// apart is fine.
	r.HandleCommand(scheduleIn(channel, "", map[string]string{"when": "* * * * *", "prompt": "p"}), fakeResponder{l: l})
	waitOp(t, l, "edit ⏰ Scheduled `* * * * *`")
}

// A where:new-thread schedule saved by an older ccbridge, too often, is
// deleted at its run with a notice, never run.
func TestTooFrequentNewThreadScheduleIsDeletedAtItsRun(t *testing.T) {
	r, ss, l := newScheduleRouter(t, owner)
	now := time.Now()
	r.now = func() time.Time { return now }
	s := state.Schedule{Server: "home", ChannelID: channel, NewThread: true, Prompt: "spin", When: "@every 1s", Cron: "@every 1s", Next: now.Add(-time.Second), Owner: owner}
	if _, err := r.opt.Registry.Schedules.Create(context.Background(), "fast", s); err != nil {
		t.Fatal(err)
	}
	r.StartScheduler()
	notice := waitOp(t, l, "send 🗑")
	if !strings.Contains(notice, "@every 1s") {
		t.Errorf("notice = %q", notice)
	}
	time.Sleep(50 * time.Millisecond)
	if got := ss.deliveredNow(); len(got) != 0 || strings.Contains(strings.Join(l.all(), "\n"), "thread spin") {
		t.Errorf("ran: delivered %q; ops %q", got, l.all())
	}
	if all := schedules(t, r); len(all) != 0 {
		t.Errorf("kept %+v", all)
	}
}

// A schedule runs as its owner: once that id is no longer in owner_ids it
// is deleted at its run, with a notice, and nothing is typed.
func TestScheduleOfARemovedOwnerDoesNotRun(t *testing.T) {
	r, ss, l := newScheduleRouter(t, owner)
	now := time.Now()
	r.now = func() time.Time { return now }
	s := state.Schedule{Server: "home", ChannelID: channel, Prompt: "push to prod", When: "0 9 * * *", Cron: "0 9 * * *", Next: now.Add(-time.Second), Owner: otherOwnerID}
	if _, err := r.opt.Registry.Schedules.Create(context.Background(), "gone", s); err != nil {
		t.Fatal(err)
	}
	r.StartScheduler()
	notice := waitOp(t, l, "send 🗑")
	if !strings.Contains(notice, "<@"+otherOwnerID+"> is no longer an owner") || !strings.Contains(notice, "push to prod") {
		t.Errorf("notice = %q", notice)
	}
	time.Sleep(50 * time.Millisecond)
	if got := ss.deliveredNow(); len(got) != 0 {
		t.Errorf("delivered %q as a removed owner", got)
	}
	if all := schedules(t, r); len(all) != 0 {
		t.Errorf("kept %+v", all)
	}
}

// A schedule whose channel is no project channel of this machine any more
// (the config changed) is deleted with a notice.
func TestScheduleOfAnUnmappedChannelIsDeleted(t *testing.T) {
	r, ss, l := newScheduleRouter(t, owner)
	now := time.Now()
	r.now = func() time.Time { return now }
	s := state.Schedule{Server: "home", ChannelID: "100000000000000099", Prompt: "tidy up", When: "0 9 * * *", Cron: "0 9 * * *", Next: now.Add(-time.Second), Owner: owner}
	if _, err := r.opt.Registry.Schedules.Create(context.Background(), "lost", s); err != nil {
		t.Fatal(err)
	}
	r.StartScheduler()
	if notice := waitOp(t, l, "send 🗑"); !strings.Contains(notice, "no longer a project channel") || !strings.Contains(notice, "tidy up") {
		t.Errorf("notice = %q", notice)
	}
	if all := schedules(t, r); len(all) != 0 {
		t.Errorf("kept %+v", all)
	}
	if got := ss.deliveredNow(); len(got) != 0 {
		t.Errorf("delivered %q", got)
	}
}

// An archived thread's schedule skips its runs (said once in the parent
// channel) and is kept: the thread back in use, it runs again.
func TestArchivedThreadScheduleSkipsUntilTheThreadIsBack(t *testing.T) {
	r, ss, l := newScheduleRouter(t, owner)
	c := newClock(time.Date(2026, 11, 26, 8, 59, 0, 0, time.Local))
	r.now = c.now
	key := session.ThreadKey("home", "api", schedThread)
	r.remember(key, func(g *state.Registered) {
		g.Server, g.Project, g.ThreadID, g.ThreadName, g.Archived = "home", "api", schedThread, "nightly", true
	})
	r.HandleCommand(scheduleIn(schedThread, channel, map[string]string{"when": "*/5 * * * *", "prompt": "check the queue"}), fakeResponder{l: l})
	waitOp(t, l, "edit ⏰ Scheduled")
	r.StartScheduler()
	c.add(time.Minute)
	r.wakeScheduler()
	skip := waitOp(t, l, "send ⏰ Skipped")
	if !strings.Contains(skip, "<#"+schedThread+"> is archived") {
		t.Errorf("skip notice = %q", skip)
	}
	c.add(5 * time.Minute)
	r.wakeScheduler()
	time.Sleep(100 * time.Millisecond)
	n := 0
	for _, op := range l.all() {
		if strings.HasPrefix(op, "send ⏰ Skipped") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d skip notices, want 1: %q", n, l.all())
	}
	if got := ss.deliveredNow(); len(got) != 0 {
		t.Errorf("delivered %q into an archived thread", got)
	}
	if len(schedules(t, r)) != 1 {
		t.Fatal("the archived thread's schedule was dropped")
	}
	r.remember(key, func(g *state.Registered) { g.Archived = false }) // a message brought it back
	c.add(5 * time.Minute)
	r.wakeScheduler()
	l.waitFor(t, "deliver "+key+" \"check the queue\"")
	// The run's own message (posted as from the schedule) gets its ✅.
	if op := waitOp(t, l, "react 2"); !strings.HasSuffix(op, " ✅") {
		t.Fatalf("the run's message got %q", op)
	}
}

// /schedules lists the schedules of the project it runs in (its channel
// and threads), not the whole server's.
func TestSchedulesListsOnlyThisProject(t *testing.T) {
	r, _, l := newScheduleRouter(t, owner)
	r.HandleCommand(scheduleIn(channel, "", map[string]string{"when": "in 1h", "prompt": "api channel prompt"}), fakeResponder{l: l})
	r.HandleCommand(scheduleIn(schedThread, channel, map[string]string{"when": "in 2h", "prompt": "api thread prompt"}), fakeResponder{l: l})
	r.HandleCommand(scheduleIn(webChannel, "", map[string]string{"when": "in 3h", "prompt": "web secret prompt"}), fakeResponder{l: l})
	waitFor(t, func() bool { return len(schedules(t, r)) == 3 })
	list := func(ch, parent string) string {
		l.mu.Lock()
		l.ops = nil
		l.mu.Unlock()
		r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: ch, ParentID: parent, User: chat.User{ID: owner}, Name: "schedules"}, fakeResponder{l: l})
		return waitOp(t, l, "edit ")
	}
	for _, c := range []struct{ ch, parent, want, not string }{
		{channel, "", "api thread prompt", "web secret prompt"},
		{schedThread, channel, "api channel prompt", "web secret prompt"},
		{webChannel, "", "web secret prompt", "api"},
	} {
		got := list(c.ch, c.parent)
		if !strings.Contains(got, c.want) || strings.Contains(got, c.not) {
			t.Errorf("/schedules in %s: %q; want %q, not %q", c.ch, got, c.want, c.not)
		}
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not met in 5s")
}

// /close deletes the opened thread's schedules and says so in its answer
// (the thread's parent may be the control-panel channel: nothing about the
// prompts is posted there); /schedules there lists that thread's alone,
// and where: new-thread is refused (an opened folder has one thread).
func TestCloseDeletesTheOpenedThreadsSchedules(t *testing.T) {
	f := newOpenRouter(t, true)
	f.command(channel, "", openName, map[string]string{"path": "api"})
	f.l.waitFor(t, "ensure "+session.ThreadKey("home", session.OpenedProject, openedID))
	f.r.HandleCommand(scheduleIn(openedID, channel, map[string]string{"when": "0 9 * * *", "prompt": "rebuild the docs"}), fakeResponder{l: f.l})
	f.r.HandleCommand(scheduleIn(channel, "", map[string]string{"when": "0 9 * * *", "prompt": "project prompt"}), fakeResponder{l: f.l})
	waitFor(t, func() bool { return len(schedules(t, f.r)) == 2 })
	f.r.HandleCommand(scheduleIn(openedID, channel, map[string]string{"when": "0 9 * * *", "prompt": "x", "where": "new-thread"}), fakeResponder{l: f.l})
	if got := f.lastEdit(t); !strings.Contains(got, "where: new-thread is for project channels") {
		t.Errorf("new-thread in an opened folder: %s", got)
	}
	f.command(openedID, channel, "schedules", nil)
	if got := f.lastEdit(t); !strings.Contains(got, "rebuild the docs") || strings.Contains(got, "project prompt") {
		t.Errorf("/schedules in the opened thread: %s", got)
	}
	f.command(openedID, channel, closeName, nil)
	f.l.waitFor(t, "stop "+session.ThreadKey("home", session.OpenedProject, openedID))
	if got := f.lastEdit(t); !strings.Contains(got, "🗑 Deleted this thread's 1 schedule(s): 0 9 * * *: rebuild the docs.") {
		t.Errorf("/close answer: %s", got)
	}
	all := schedules(t, f.r)
	if len(all) != 1 {
		t.Fatalf("schedules after /close: %+v", all)
	}
	for _, s := range all {
		if s.Prompt != "project prompt" {
			t.Errorf("kept %+v", s)
		}
	}
	for _, op := range f.l.all() {
		if strings.HasPrefix(op, "send ") && strings.Contains(op, "rebuild the docs") {
			t.Errorf("the prompt was posted outside the thread: %q", op)
		}
	}
}
