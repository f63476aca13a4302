package schedule

import (
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/state"
)

// /schedule refuses what may not run: no prompt, a new thread from an
// opened folder's thread, a new thread every minute.
func TestNewRefusesWhatMayNotRun(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.Local)
	for _, c := range []struct {
		q    Request
		want string
	}{
		{Request{When: "in 20m", Prompt: "  "}, "prompt is empty"},
		{Request{When: "in 20m", Prompt: "x", Where: "new-thread", Opened: true}, "new-thread is for project channels"},
		{Request{When: "* * * * *", Prompt: "x", Where: "new-thread"}, "at least 5m0s apart"},
		{Request{When: "someday", Prompt: "x"}, "⚠️"},
	} {
		if _, why := New(c.q, now); !strings.Contains(why, c.want) {
			t.Errorf("%+v: %q, want %q", c.q, why, c.want)
		}
	}
	s, why := New(Request{Server: "home", ChannelID: "c", Owner: "o", When: "0 9 * * 1-5", Prompt: " standup ", Where: "new-thread"}, now)
	if why != "" || s.Prompt != "standup" || !s.NewThread || s.Cron == "" || !s.Next.After(now) || s.Owner != "o" {
		t.Fatalf("New = %+v, %q", s, why)
	}
}

// A project's list holds its channel's and its threads' schedules, an
// opened folder's thread its own; never another server's.
func TestScopeHolds(t *testing.T) {
	in := state.Schedule{Server: "home", ChannelID: "thread", ParentID: "project"}
	for _, c := range []struct {
		sc   Scope
		want bool
	}{
		{Scope{Server: "home", Project: "project"}, true},
		{Scope{Server: "home", Project: "other"}, false},
		{Scope{Server: "away", Project: "project"}, false},
		{Scope{Server: "home", Thread: "thread"}, true},
	} {
		if got := c.sc.Holds(in); got != c.want {
			t.Errorf("%+v: %v", c.sc, got)
		}
	}
}

// Due fires the due schedules soonest first, and says when the next one
// is, among those not due and the runs fired.
func TestDueFiresInOrder(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	all := map[string]state.Schedule{
		"late":   {Next: now.Add(-time.Minute)},
		"later":  {Next: now.Add(-time.Second)},
		"future": {Next: now.Add(time.Hour)},
	}
	var fired []string
	next := Due(all, func() time.Time { return now }, func(id string, _ state.Schedule, _ time.Time) time.Time {
		fired = append(fired, id)
		if id == "late" {
			return now.Add(time.Minute) // a cron line: it runs again
		}
		return time.Time{}
	})
	if strings.Join(fired, ",") != "late,later" || !next.Equal(now.Add(time.Minute)) {
		t.Fatalf("fired %v, next %v", fired, next)
	}
}
