package router

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/schedule"
	"github.com/ccbridge/ccbridge/internal/state"
)

// clock is a settable time for the scheduler.
type clock struct{ t atomic.Int64 }

func (c *clock) now() time.Time      { return time.Unix(0, c.t.Load()) }
func (c *clock) add(d time.Duration) { c.t.Add(int64(d)) }
func newClock(t time.Time) *clock    { c := &clock{}; c.t.Store(t.UnixNano()); return c }
func scheduleCmd(opts map[string]string) chat.CommandEvent {
	return chat.CommandEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, Name: "schedule", Options: opts}
}

func schedules(t *testing.T, r *Router) map[string]state.Schedule {
	t.Helper()
	all, err := r.opt.Registry.Schedules.List()
	if err != nil {
		t.Fatal(err)
	}
	return all
}

func TestScheduleIsSavedListedAndCancelled(t *testing.T) {
	r, _, _, l, _ := newRouter(t)
	c := newClock(time.Date(2026, 11, 26, 14, 0, 0, 0, time.Local))
	r.now = c.now
	r.HandleCommand(scheduleCmd(map[string]string{"when": "in 20m", "prompt": "run the benchmarks again"}), fakeResponder{l: l})
	edit := waitOp(t, l, "edit ")
	due := c.now().Add(20 * time.Minute).Unix()
	if !strings.Contains(edit, "⏰ Scheduled for <t:"+itoa64(due)+":F>") || !strings.Contains(edit, "run the benchmarks again") {
		t.Fatalf("answer = %q", edit)
	}
	all := schedules(t, r)
	if len(all) != 1 {
		t.Fatalf("schedules = %+v", all)
	}
	var id string
	for k, s := range all {
		id = k
		if s.Owner != owner || s.ChannelID != channel || s.Cron != "" || s.Next.Unix() != due {
			t.Errorf("record = %+v", s)
		}
	}
	r.HandleCommand(scheduleCmd(map[string]string{"when": "0 9 * * 1-5", "prompt": "summarise the open PRs", "where": "new-thread"}), fakeResponder{l: l})
	list := r.scheduleList(schedule.Scope{Server: "home", Project: channel}, "")
	if !strings.Contains(list.Content, "**1.** for <t:") || !strings.Contains(list.Content, "**2.** `0 9 * * 1-5`") || len(list.Rows) != 1 || len(list.Rows[0].Buttons) != 2 {
		t.Fatalf("list = %q %+v", list.Content, list.Rows)
	}
	cancel, _ := chat.ID{Instance: "inst1", Kind: schedule.Kind, Args: []string{"cancel", id}}.Encode()
	r.HandleComponent(l.onDrawn(r, chat.ComponentEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, CustomID: cancel}), fakeResponder{l: l})
	waitOp(t, l, "update 🗑 Cancelled by <@"+owner+">: run the benchmarks again.")
	if all := schedules(t, r); len(all) != 1 {
		t.Fatalf("after cancel: %+v", all)
	}
	r.HandleComponent(l.onDrawn(r, chat.ComponentEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, CustomID: cancel}), fakeResponder{l: l})
	waitOp(t, l, "update That schedule was already cancelled")
	r.HandleCommand(scheduleCmd(map[string]string{"when": "tomorrow", "prompt": "x"}), fakeResponder{l: l})
	waitOp(t, l, `edit ⚠️ "tomorrow" is not a time`)
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

func TestScheduledPromptIsTypedOnceWhenDue(t *testing.T) {
	r, ss, _, l, _ := newRouter(t)
	c := newClock(time.Now())
	r.now = c.now
	r.HandleCommand(scheduleCmd(map[string]string{"when": "in 20s", "prompt": "check the build"}), fakeResponder{l: l})
	waitOp(t, l, "edit ⏰ Scheduled")
	r.StartScheduler()
	time.Sleep(50 * time.Millisecond)
	if got := ss.deliveredNow(); len(got) != 0 {
		t.Fatalf("delivered early: %q", got)
	}
	c.add(21 * time.Second)
	r.wakeScheduler()
	l.waitReact(t, "✅")
	if post := waitOp(t, l, "post "+channel+" ⏰ Scheduled by <@"+owner+"> (in 20s):"); !strings.Contains(post, "check the build") {
		t.Errorf("post = %q", post)
	}
	c.add(time.Minute)
	r.wakeScheduler()
	time.Sleep(50 * time.Millisecond)
	if got := ss.deliveredNow(); len(got) != 1 || got[0] != "check the build" {
		t.Fatalf("delivered %q", got)
	}
	if all := schedules(t, r); len(all) != 0 {
		t.Errorf("a one-shot that ran is kept: %+v", all)
	}
}

func TestCronScheduleRunsAgainAndNewThreadsAreNamedAfterThePrompt(t *testing.T) {
	r, ss, _, l, _ := newRouter(t)
	c := newClock(time.Date(2026, 11, 26, 8, 59, 50, 0, time.Local)) // a Thursday
	r.now = c.now
	r.HandleCommand(scheduleCmd(map[string]string{"when": "0 9 * * 1-5", "prompt": "summarise the open PRs", "where": "new-thread"}), fakeResponder{l: l})
	waitOp(t, l, "edit ⏰ Scheduled `0 9 * * 1-5`")
	r.StartScheduler()
	c.add(15 * time.Second)
	r.wakeScheduler()
	l.waitFor(t, "thread summarise the open PRs")
	l.waitReact(t, "✅")
	if got := ss.deliveredNow(); len(got) != 1 || got[0] != "summarise the open PRs" {
		t.Fatalf("delivered %q", got)
	}
	if !strings.Contains(strings.Join(l.all(), "\n"), `deliver home-api-t100000000000000077 "summarise the open PRs"`) {
		t.Errorf("not delivered in the new thread: %q", l.all())
	}
	for _, s := range schedules(t, r) {
		if want := time.Date(2026, 11, 27, 9, 0, 0, 0, time.Local); !s.Next.Equal(want) || s.Runs != 1 {
			t.Errorf("after a run: next %s runs %d, want %s", s.Next, s.Runs, want)
		}
	}
}

func TestMissedSchedulesRunWithinTheHourElseAreSkipped(t *testing.T) {
	r, ss, _, l, _ := newRouter(t)
	now := time.Now()
	r.now = func() time.Time { return now }
	for id, late := range map[string]time.Duration{"late59m": 59 * time.Minute, "late2h": 2 * time.Hour} {
		s := state.Schedule{Server: "home", ChannelID: channel, Prompt: "prompt " + id, When: "in 1h", Next: now.Add(-late), Owner: owner}
		if _, err := r.opt.Registry.Schedules.Create(context.Background(), id, s); err != nil {
			t.Fatal(err)
		}
	}
	r.StartScheduler()
	l.waitReact(t, "✅")
	skipped := waitOp(t, l, "send ⏰ Skipped a scheduled prompt due <t:")
	if !strings.Contains(skipped, "prompt late2h") {
		t.Errorf("skip notice = %q", skipped)
	}
	time.Sleep(50 * time.Millisecond)
	if got := ss.deliveredNow(); len(got) != 1 || got[0] != "prompt late59m" {
		t.Fatalf("delivered %q", got)
	}
	if all := schedules(t, r); len(all) != 0 {
		t.Errorf("kept %+v", all)
	}
}
