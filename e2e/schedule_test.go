//go:build e2e

package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
)

// A schedule "in 20s" delivers its prompt once, though the daemon restarts
// while it waits.
func TestScheduleRunsOnceAcrossARestart(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	b.command(p, "schedule", map[string]any{"when": "in 20s", "prompt": "SCHED_ONE say hello"}, "⏰ Scheduled for <t:")
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	_ = b.cmd.Wait()
	time.Sleep(2 * time.Second)
	b.start()
	post := b.srv.WaitMessage(long, "the scheduled prompt's post", func(m *fakediscord.Message) bool {
		return m.ChannelID == p.channel && m.Author.Bot && strings.Contains(m.Content, "⏰ Scheduled by")
	})
	b.waitReply(p, "ok: SCHED_ONE say hello")
	b.waitReaction(post, "✅")
	time.Sleep(3 * time.Second)
	if got := promptsWith(b.model, "SCHED_ONE"); len(got) != 1 || got[0] != "SCHED_ONE say hello" {
		t.Fatalf("Claude got %q", got)
	}
}

// A cron schedule is listed with its next run and cancelled from the list.
func TestScheduleCronListedAndCancelled(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	b.command(p, "schedule", map[string]any{"when": "0 9 * * 1-5", "prompt": "summarise the open PRs", "where": "new-thread"}, "in a new thread")
	msg := b.command(p, "schedules", nil, "**1.** `0 9 * * 1-5` (the machine's time), next <t:")
	if !strings.Contains(msg.Content, "summarise the open PRs") {
		t.Fatalf("list = %q", msg.Content)
	}
	var cancel string
	for _, id := range msg.CustomIDs() {
		if msg.Component(id)["label"] == "Cancel 1" {
			cancel = id
		}
	}
	if cancel == "" {
		t.Fatalf("no Cancel button: %q", msg.CustomIDs())
	}
	b.srv.Click(msg.ID, cancel, b.owner)
	b.waitCardText(msg, "No schedules for this project on this machine")
	reg, err := state.OpenRegistry(filepath.Join(b.stateDir, "ccbridge"))
	if err != nil {
		t.Fatal(err)
	}
	if all, _ := reg.Schedules.List(); len(all) != 0 {
		t.Fatalf("schedules left: %+v", all)
	}
}

// A one-shot missed while ccbridge was down runs when it starts, within the
// hour.
func TestMissedScheduleRunsAtStart(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	_ = b.cmd.Wait()
	reg, err := state.OpenRegistry(filepath.Join(b.stateDir, "ccbridge"))
	if err != nil {
		t.Fatal(err)
	}
	missed := state.Schedule{Server: p.bot.Name, ChannelID: p.channel, Prompt: "SCHED_MISSED run it now", When: "in 10m",
		Next: time.Now().Add(-10 * time.Minute), Owner: b.owner.ID, Created: time.Now().Add(-20 * time.Minute)}
	if _, err := reg.Schedules.Create(context.Background(), state.NewScheduleID(), missed); err != nil {
		t.Fatal(err)
	}
	b.start()
	b.waitReply(p, "ok: SCHED_MISSED run it now")
}
