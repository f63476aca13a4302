package router

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
)

// A project's channel deleted in Discord: its threads close as deleted
// ones do, its own session stops once its turn ends, and the owners hear
// it in the control panel's channel, with what to change.
func TestDeletedProjectChannelStopsItsSessionsAndSaysSo(t *testing.T) {
	const panel = "100000000000000004"
	r, ss, _, l, _ := newRouterFrom(t, fmt.Sprintf(`
[[servers]]
name = "home"
token_env = "X"
guild_id = "100000000000000001"
owner_ids = [%q]
general_channel_id = %q
  [[servers.projects]]
  name = "api"
  channel_id = %q
  path = %q
`, owner, panel, channel, t.TempDir()))
	r.deletedCap = 300 * time.Millisecond
	threadKey := registerThread(t, r)
	if _, err := r.opt.Registry.Schedules.Create(context.Background(), "s1", state.Schedule{Server: "home", ChannelID: channel, Prompt: "nightly build", When: "every day at 3:00", Cron: "0 3 * * *", Owner: owner}); err != nil {
		t.Fatal(err)
	}
	// A folder opened with /open in the channel is a thread of it too.
	const openedThread = "100000000000000061"
	if _, err := r.opt.Registry.Opened.Create(context.Background(), openedThread, state.Opened{Server: "home", ChannelID: channel, ThreadID: openedThread, Path: t.TempDir(), Owner: owner}); err != nil {
		t.Fatal(err)
	}
	openedKey := session.ThreadKey("home", session.OpenedProject, openedThread)
	r.remember(openedKey, func(g *state.Registered) {
		g.Server, g.Project, g.ThreadID = "home", session.OpenedProject, openedThread
	})
	ss.setState("busy")
	r.HandleChannelDeleted("home", "100000000000000099") // not a project's: nothing
	r.HandleChannelDeleted("home", channel)
	l.waitFor(t, "stop "+threadKey)
	l.waitFor(t, "stop "+openedKey)
	l.waitFor(t, "stop home-api")
	if !slices.ContainsFunc(l.all(), func(op string) bool {
		return strings.HasPrefix(op, "send ⚠️ The channel of project **api** was deleted") && strings.Contains(op, "`channel_id`") && strings.Contains(op, "nightly build")
	}) {
		t.Fatalf("the owners were not told in the panel's channel: %q", l.all())
	}
	if _, err := r.opt.Registry.Schedules.Get("s1"); err == nil {
		t.Error("the deleted channel's schedule is still there")
	}
	r.waitClosed(t)
	// Nothing starts it there again, also after a restart: the next
	// start says so again.
	if _, err := r.sessionTarget(target{key: "home-api", rt: r.tab.Load().routes[channel]}); err == nil || !strings.Contains(err.Error(), "was deleted") {
		t.Errorf("a session target for the deleted channel: %v", err)
	}
	n := len(l.all())
	r.StartConfigured()
	if !slices.ContainsFunc(l.all()[n:], func(op string) bool {
		return strings.HasPrefix(op, "send ⚠️ The channel of project **api** was deleted")
	}) {
		t.Errorf("the start did not repeat the word: %q", l.all()[n:])
	}
	// A session that outlived the daemon waiting to stop it (still busy
	// here: stopped at the cap) is stopped by the next start.
	for deadline := time.Now().Add(5 * time.Second); !slices.Contains(l.all()[n:], "stop home-api"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the next start did not stop the session: %q", l.all()[n:])
		}
	}
}
