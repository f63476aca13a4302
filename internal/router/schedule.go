package router

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/schedule"
	"github.com/ccbridge/ccbridge/internal/state"
)

// /schedule types a prompt into a session at a set time, exactly as if the
// owner who scheduled it had typed it then (same queue, receipt, dialogs and
// policy). Schedules live in the durable registry of the machine that maps
// the channel, so exactly one machine runs each, across restarts.

// Schedule limits.
const (
	maxScheduledPrompt = 4000
	// missedWindow: a run missed while ccbridge was down still runs when it
	// starts if it is at most this late; later ones are reported skipped.
	missedWindow = time.Hour
	// scheduleIdle bounds the scheduler's sleep: the clock may jump.
	scheduleIdle = 30 * time.Second
	scheduleKind = "sched"
	// listedSchedules is how many Cancel buttons one message holds.
	listedSchedules = 25
)

func scheduleCommands() []chat.CommandSpec {
	return []chat.CommandSpec{
		{Name: "schedule", Description: "Send Claude a prompt later, or by cron", Options: []chat.OptionSpec{
			{Name: "when", Description: `"in 20m", "in 2h", "at 09:00" or a cron line like "0 9 * * 1-5"`, Required: true, MaxLength: 100},
			{Name: "prompt", Description: "what to send Claude then", Required: true, MaxLength: maxScheduledPrompt},
			{Name: "where", Description: "this channel or thread (default), or a new thread each run", Choices: []chat.Choice{{Name: "this channel or thread", Value: "this"}, {Name: "a new thread", Value: "new-thread"}}}}},
		{Name: "schedules", Description: "List the schedules, each with Cancel"},
	}
}

func (r *Router) runSchedule(ev chat.CommandEvent, tg target) chat.Reply {
	if ev.Name == "schedules" {
		return r.scheduleList(ev.Server, "")
	}
	now := r.now()
	when, err := schedule.Parse(ev.Options["when"], now)
	if err != nil {
		return chat.Reply{Content: "⚠️ " + errText(err)}
	}
	prompt := strings.TrimSpace(ev.Options["prompt"])
	if prompt == "" {
		return chat.Reply{Content: "⚠️ The prompt is empty: nothing to send."}
	}
	s := state.Schedule{Server: ev.Server, ChannelID: ev.ChannelID, ParentID: ev.ParentID, NewThread: ev.Options["where"] == "new-thread",
		Prompt: prompt, When: ev.Options["when"], Cron: when.Cron, Next: when.Next, Owner: ev.User.ID, Created: now}
	id := state.NewScheduleID()
	if _, err := r.opt.Registry.Schedules.Create(r.ctx, id, s); err != nil {
		return chat.Reply{Content: "⚠️ Could not save the schedule: " + errText(err)}
	}
	r.opt.Log.Info("scheduled a prompt", "schedule", id, "session", tg.key, "next", when.Next, "cron", when.Cron)
	r.wakeScheduler()
	return chat.Reply{Content: fmt.Sprintf("⏰ Scheduled %s: %s.\n>>> %s", describeSchedule(s), where(s), clip(prompt, 1500))}
}

// describeSchedule says when a schedule runs, in Discord's timestamps (each
// reader sees their own time zone).
func describeSchedule(s state.Schedule) string {
	at := fmt.Sprintf("<t:%d:F> (<t:%d:R>)", s.Next.Unix(), s.Next.Unix())
	if s.Cron == "" {
		return "for " + at
	}
	return fmt.Sprintf("`%s` (the machine's time), next %s", s.Cron, at)
}

func where(s state.Schedule) string {
	if s.NewThread {
		return fmt.Sprintf("in a new thread of <#%s> each time", cmp.Or(s.ParentID, s.ChannelID))
	}
	return fmt.Sprintf("in <#%s>", s.ChannelID)
}

// scheduleList lists a server's schedules, soonest first, with Cancel
// buttons; note goes first.
func (r *Router) scheduleList(server, note string) chat.Reply {
	all, err := r.opt.Registry.Schedules.List()
	if err != nil {
		return chat.Reply{Content: "⚠️ " + errText(err)}
	}
	type item struct {
		id string
		s  state.Schedule
	}
	var items []item
	for id, s := range all {
		if s.Server == server {
			items = append(items, item{id, s})
		}
	}
	slices.SortFunc(items, func(a, b item) int { return cmp.Or(a.s.Next.Compare(b.s.Next), strings.Compare(a.id, b.id)) })
	var b strings.Builder
	if note != "" {
		b.WriteString(note + "\n")
	}
	if len(items) == 0 {
		b.WriteString("No schedules on this machine. Set one with /schedule.")
		return chat.Reply{Content: b.String()}
	}
	var rows []chat.Row
	for i, it := range items {
		if i == listedSchedules {
			fmt.Fprintf(&b, "…and %d more.", len(items)-i)
			break
		}
		line := fmt.Sprintf("**%d.** %s, %s: %s\n", i+1, describeSchedule(it.s), where(it.s), clip(strings.Join(strings.Fields(it.s.Prompt), " "), 80))
		if len([]rune(b.String()))+len([]rune(line)) > chat.Limit-60 {
			fmt.Fprintf(&b, "…and %d more.", len(items)-i)
			break
		}
		b.WriteString(line)
		id, err := chat.ID{Instance: r.opt.Instance, Kind: scheduleKind, Args: []string{"cancel", it.id}}.Encode()
		if err != nil {
			continue
		}
		if len(rows) == 0 || len(rows[len(rows)-1].Buttons) == 5 {
			rows = append(rows, chat.Row{})
		}
		last := &rows[len(rows)-1]
		last.Buttons = append(last.Buttons, chat.Button{Label: fmt.Sprintf("Cancel %d", i+1), CustomID: id, Style: chat.Danger})
	}
	return chat.Reply{Content: b.String(), Rows: rows}
}

// scheduleAction answers a Cancel button of /schedules.
func (r *Router) scheduleAction(ev chat.ComponentEvent, args []string, resp chat.Responder) {
	if len(args) != 2 || args[0] != "cancel" {
		_ = resp.Respond(chat.Reply{Content: "This button is no longer valid.", Ephemeral: true})
		return
	}
	s, err := r.opt.Registry.Schedules.Get(args[1])
	if errors.Is(err, state.ErrNotFound) || (err == nil && s.Server != ev.Server) {
		_, _ = resp.Update(r.scheduleList(ev.Server, "That schedule was already cancelled, or it ran."))
		return
	}
	if err == nil {
		err = r.opt.Registry.Schedules.Delete(r.ctx, args[1])
	}
	if err != nil {
		_ = resp.Respond(chat.Reply{Content: "⚠️ " + errText(err), Ephemeral: true})
		return
	}
	r.opt.Log.Info("cancelled a schedule", "schedule", args[1], "by", ev.User.ID)
	_, _ = resp.Update(r.scheduleList(ev.Server, fmt.Sprintf("🗑 Cancelled by <@%s>: %s.", ev.User.ID, clip(strings.Join(strings.Fields(s.Prompt), " "), 100))))
}

// wakeScheduler makes the scheduler look again (a schedule was added).
func (r *Router) wakeScheduler() {
	select {
	case r.schedWake <- struct{}{}:
	default:
	}
}

// StartScheduler runs due schedules until the router stops.
func (r *Router) StartScheduler() {
	r.wg.Add(1)
	go r.scheduler()
}

func (r *Router) scheduler() {
	defer r.wg.Done()
	for {
		next := r.runDue()
		wait := scheduleIdle
		if !next.IsZero() {
			wait = min(wait, max(0, next.Sub(r.now())))
		}
		select {
		case <-r.ctx.Done():
			return
		case <-r.schedWake:
		case <-time.After(wait):
		}
	}
}

// runDue runs (or reports skipped) every schedule of this machine that is
// due, and returns when the next one is.
func (r *Router) runDue() time.Time {
	all, err := r.opt.Registry.Schedules.List()
	if err != nil {
		r.opt.Log.Error("could not read the schedules", "err", err)
		return time.Time{}
	}
	ids := make([]string, 0, len(all))
	for id := range all {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int { return all[a].Next.Compare(all[b].Next) })
	var next time.Time
	for _, id := range ids {
		s := all[id]
		now := r.now()
		if s.Next.After(now) {
			if next.IsZero() || s.Next.Before(next) {
				next = s.Next
			}
			continue
		}
		if after := r.fire(id, s, now); !after.IsZero() && (next.IsZero() || after.Before(next)) {
			next = after
		}
	}
	return next
}

// fire runs one due schedule. The record moves on (or goes) before the prompt
// is typed: a crash between the two loses one run rather than typing it twice.
func (r *Router) fire(id string, s state.Schedule, now time.Time) (next time.Time) {
	log := r.opt.Log.With("schedule", id, "channel", s.ChannelID)
	late := now.Sub(s.Next)
	due := s.Next
	if s.Cron != "" {
		var err error
		if next, err = schedule.After(s.Cron, now); err != nil {
			log.Error("a schedule cannot run again", "err", err)
			next = time.Time{}
		}
	}
	var err error
	if next.IsZero() {
		err = r.opt.Registry.Schedules.Delete(r.ctx, id)
	} else {
		_, err = r.opt.Registry.Schedules.Update(r.ctx, id, func(rec *state.Schedule) error {
			rec.Next, rec.Runs = next, rec.Runs+1
			return nil
		})
	}
	if err != nil {
		log.Error("could not record a schedule's run; not running it", "err", err)
		return time.Time{}
	}
	if late > missedWindow {
		log.Warn("skipped a schedule missed while ccbridge was down", "due", due)
		r.send(s.Server, s.ChannelID, fmt.Sprintf("⏰ Skipped a scheduled prompt due <t:%d:F>: ccbridge was not running then (runs more than %s late are skipped).\n>>> %s",
			due.Unix(), missedWindow, clip(s.Prompt, 1500)))
		return next
	}
	r.runScheduled(s, log)
	return next
}

// runScheduled posts the prompt as from the schedule and queues it as the
// owner's message, in the channel or a new thread.
func (r *Router) runScheduled(s state.Schedule, log *slog.Logger) {
	ch, parent := s.ChannelID, s.ParentID
	name := ""
	if s.NewThread {
		ch = cmp.Or(s.ParentID, s.ChannelID)
		name = clip(strings.Join(strings.Fields(s.Prompt), " "), maxThreadName)
		tid, err := r.opt.Replier.StartThread(r.ctx, s.Server, ch, name)
		if err != nil {
			log.Error("could not start a scheduled prompt's thread", "err", err)
			r.send(s.Server, ch, "⚠️ Could not start the thread for a scheduled prompt: "+errText(err))
			return
		}
		ch, parent = tid, ch
	}
	tg, ok := r.resolve(s.Server, ch, parent)
	if !ok {
		log.Error("a schedule's channel is no longer a project channel of this machine")
		return
	}
	if name != "" {
		r.rememberThreadName(tg, name)
	}
	post := fmt.Sprintf("⏰ Scheduled by <@%s> (%s):\n>>> %s", s.Owner, cmp.Or(s.Cron, s.When), s.Prompt)
	ctx, cancel := context.WithTimeout(r.ctx, time.Minute)
	msgID, err := r.opt.Replier.Post(ctx, s.Server, ch, chat.Message{Content: clip(post, chat.Limit)})
	cancel()
	if err != nil {
		log.Error("could not post a scheduled prompt", "err", err)
	}
	r.enqueue(tg, item{ev: chat.MessageEvent{Server: s.Server, ChannelID: ch, ParentID: parent, MessageID: msgID,
		Author: chat.User{ID: s.Owner}, Content: s.Prompt}, own: true}) // catchup.go
}
