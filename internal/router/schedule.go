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
	"github.com/ccbridge/ccbridge/internal/land"
	"github.com/ccbridge/ccbridge/internal/schedule"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
)

// /schedule types a prompt into a session at a set time, exactly as if the
// owner who scheduled it had typed it then (same queue, receipt, dialogs and
// policy). Schedules live in the durable registry of the machine that maps
// the channel, so exactly one machine runs each, across restarts.

// scheduleIdle bounds the scheduler's sleep: the clock may jump.
const scheduleIdle = 30 * time.Second

func (r *Router) runSchedule(ev chat.CommandEvent, tg target) chat.Reply {
	if ev.Name == "schedules" {
		return r.scheduleList(scopeOf(tg), "")
	}
	s, refusal := schedule.New(schedule.Request{Server: ev.Server, ChannelID: ev.ChannelID, ParentID: ev.ParentID, Owner: ev.User.ID,
		When: ev.Options["when"], Prompt: ev.Options["prompt"], Where: ev.Options["where"], Opened: tg.rt.project.Name == session.OpenedProject}, r.now())
	if refusal != "" {
		return chat.Reply{Content: refusal}
	}
	id := state.NewScheduleID()
	if _, err := r.opt.Registry.Schedules.Create(r.ctx, id, s); err != nil {
		return chat.Reply{Content: "⚠️ Could not save the schedule: " + chat.ErrText(err)}
	}
	r.opt.Log.Info("scheduled a prompt", "schedule", id, "session", tg.key, "next", s.Next, "cron", s.Cron)
	r.wakeScheduler()
	return chat.Reply{Content: schedule.Scheduled(s)}
}

func scopeOf(tg target) schedule.Scope {
	if tg.rt.project.Name == session.OpenedProject {
		return schedule.Scope{Server: tg.rt.server.Name, Thread: tg.threadID}
	}
	return schedule.Scope{Server: tg.rt.server.Name, Project: tg.rt.project.ChannelID}
}

// scopeOfSchedule is the scope a schedule is listed in.
func (r *Router) scopeOfSchedule(s state.Schedule) schedule.Scope {
	if _, known := r.openedThread(s.Server, s.ChannelID); known { // open.go
		return schedule.Scope{Server: s.Server, Thread: s.ChannelID}
	}
	return schedule.Scope{Server: s.Server, Project: cmp.Or(s.ParentID, s.ChannelID)}
}

// scopeOfChannel is the scope of a list shown in a channel: the project's
// when it is a project channel, else that channel's (thread's) own.
func (r *Router) scopeOfChannel(server, channelID string) schedule.Scope {
	if _, ok := r.lookup(server, channelID); ok {
		return schedule.Scope{Server: server, Project: channelID}
	}
	return schedule.Scope{Server: server, Thread: channelID}
}

// scheduleList lists the schedules of a scope (schedule.List); note goes
// first.
func (r *Router) scheduleList(sc schedule.Scope, note string) chat.Reply {
	all, err := r.opt.Registry.Schedules.List()
	if err != nil {
		return chat.Reply{Content: "⚠️ " + chat.ErrText(err)}
	}
	return schedule.List(all, sc, note, func(id string) (string, error) {
		return chat.ID{Instance: r.opt.Instance, Kind: schedule.Kind, Args: []string{"cancel", id}}.Encode()
	})
}

// scheduleAction answers a Cancel button of /schedules.
func (r *Router) scheduleAction(ev chat.ComponentEvent, args []string, resp chat.Responder) {
	if len(args) != 2 || args[0] != "cancel" {
		_ = resp.Respond(chat.Reply{Content: "This button is no longer valid.", Ephemeral: true})
		return
	}
	s, err := r.opt.Registry.Schedules.Get(args[1])
	if errors.Is(err, state.ErrNotFound) || (err == nil && s.Server != ev.Server) {
		_, _ = resp.Update(r.scheduleList(r.scopeOfChannel(ev.Server, ev.ChannelID), "That schedule was already cancelled, or it ran."))
		return
	}
	if err == nil {
		err = r.opt.Registry.Schedules.Delete(r.ctx, args[1])
	}
	if err != nil {
		_ = resp.Respond(chat.Reply{Content: "⚠️ " + chat.ErrText(err), Ephemeral: true})
		return
	}
	r.opt.Log.Info("cancelled a schedule", "schedule", args[1], "by", ev.User.ID)
	_, _ = resp.Update(r.scheduleList(r.scopeOfSchedule(s), fmt.Sprintf("🗑 Cancelled by <@%s>: %s.", ev.User.ID, chat.Clip(schedule.OneLine(s.Prompt), 100))))
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
	return schedule.Due(all, r.now, r.fire)
}

// fire runs one due schedule. The record moves on (or goes) before the prompt
// is typed: a crash between the two loses one run rather than typing it twice.
// A schedule that may no longer run (its owner, channel or time is not
// taken any more) is deleted with a notice; one whose thread is archived
// skips the run: a schedule never brings a thread's session back.
func (r *Router) fire(id string, s state.Schedule, now time.Time) (next time.Time) {
	log := r.opt.Log.With("schedule", id, "channel", s.ChannelID)
	late := now.Sub(s.Next)
	due := s.Next
	tg, drop := r.scheduleTarget(s, now)
	if drop != "" {
		r.dropSchedule(id, s, drop, log)
		return time.Time{}
	}
	if s.Cron != "" {
		next, _ = schedule.After(s.Cron, now) // scheduleTarget parsed it
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
	if why := r.scheduleSkip(s, tg); why != "" {
		log.Info("skipped a scheduled run", "why", why)
		if _, told := r.schedTold.LoadOrStore(id, true); !told {
			r.scheduleNotice(s, fmt.Sprintf("⏰ Skipped a scheduled prompt (%s): %s\n>>> %s", cmp.Or(s.Cron, s.When), why, chat.Clip(s.Prompt, 1500)))
		}
		return next
	}
	r.schedTold.Delete(id)
	if late > schedule.MissedWindow {
		log.Warn("skipped a schedule missed while ccbridge was down", "due", due)
		r.send(s.Server, s.ChannelID, fmt.Sprintf("⏰ Skipped a scheduled prompt due <t:%d:F>: ccbridge was not running then (runs more than %s late are skipped).\n>>> %s",
			due.Unix(), schedule.MissedWindow, chat.Clip(s.Prompt, 1500)))
		return next
	}
	r.runScheduled(s, tg, log)
	return next
}

// scheduleTarget is where a due schedule runs (for where:new-thread, the
// channel its threads start in), or why it may not run any more.
func (r *Router) scheduleTarget(s state.Schedule, now time.Time) (target, string) {
	if !r.allowed(s.Server, chat.User{ID: s.Owner}) {
		return target{}, fmt.Sprintf("<@%s> is no longer an owner of this server (owner_ids), and a schedule runs as the owner who set it", s.Owner)
	}
	if s.Cron != "" {
		if _, err := schedule.After(s.Cron, now); err != nil {
			return target{}, fmt.Sprintf("its time `%s` is not taken any more (%s)", s.Cron, chat.ErrText(err))
		}
		if s.NewThread {
			if why := schedule.TooOften(s.Cron, now); why != "" {
				return target{}, why
			}
		}
	}
	ch, parent := s.ChannelID, s.ParentID
	if s.NewThread {
		ch, parent = cmp.Or(s.ParentID, s.ChannelID), ""
	}
	tg, ok := r.resolve(s.Server, ch, parent)
	if !ok || (s.NewThread && tg.threadID != "") {
		return target{}, fmt.Sprintf("<#%s> is no longer a project channel of this machine, a thread of one, or an open folder's thread", ch)
	}
	return tg, ""
}

// scheduleSkip says why a schedule skips this run, or "": its thread is
// archived (or was deleted while ccbridge was down), and the run would
// start the thread's session again where nobody looks.
func (r *Router) scheduleSkip(s state.Schedule, tg target) string {
	if tg.threadID == "" {
		return ""
	}
	reg, err := r.opt.Registry.Sessions.Get(tg.key)
	if err != nil || !reg.Archived {
		return ""
	}
	return schedule.Archived(s, tg.threadID)
}

// dropSchedule deletes a schedule that may not run any more, and says why.
func (r *Router) dropSchedule(id string, s state.Schedule, why string, log *slog.Logger) {
	if err := r.opt.Registry.Schedules.Delete(r.ctx, id); err != nil {
		log.Error("could not delete a schedule that may not run", "why", why, "err", err)
		return
	}
	r.schedTold.Delete(id)
	log.Warn("deleted a schedule that may not run any more", "why", why)
	r.scheduleNotice(s, fmt.Sprintf("🗑 Deleted a schedule (%s) of <@%s>: %s.\n>>> %s", cmp.Or(s.Cron, s.When), s.Owner, why, chat.Clip(s.Prompt, 1500)))
}

// scheduleNotice tells about a schedule where it was set, out of its
// thread (a post would un-archive it): in the project channel. An opened
// folder's thread may hang off the control-panel channel, which every
// member may read: notices about its schedules go in the thread itself,
// or nowhere once it is closed.
func (r *Router) scheduleNotice(s state.Schedule, text string) {
	if o, err := r.opt.Registry.Opened.Get(s.ChannelID); err == nil && o.Server == s.Server {
		if !o.Closed {
			r.send(s.Server, s.ChannelID, text)
		}
		return
	}
	r.send(s.Server, cmp.Or(s.ParentID, s.ChannelID), text)
}

// dropThreadSchedules deletes the schedules set in a thread that was
// deleted or closed: a thread's schedules go with it. It returns the
// notice (also posted in the project channel for a deleted project
// thread), or "" when there were none.
func (r *Router) dropThreadSchedules(tg target, deleted bool) string {
	prompts := r.dropSchedules(tg.rt.server.Name, func(s state.Schedule) bool { return s.ChannelID == tg.threadID })
	if len(prompts) == 0 {
		return ""
	}
	r.opt.Log.Info("deleted a closed thread's schedules", "session", tg.key, "count", len(prompts))
	if tg.rt.project.Name == session.OpenedProject {
		// Said in the /close answer; the parent may be the panel channel.
		return fmt.Sprintf("🗑 Deleted this thread's %d schedule(s): %s.", len(prompts), strings.Join(prompts, "; "))
	}
	reg, _ := r.opt.Registry.Sessions.Get(tg.key)
	text := fmt.Sprintf("🗑 Deleted the schedule(s) of %s, which went with it:\n%s", land.ThreadRef(tg.threadID, reg.ThreadName, deleted), "• "+strings.Join(prompts, "\n• "))
	r.send(tg.rt.server.Name, tg.rt.project.ChannelID, text)
	return text
}

// dropSchedules deletes server's schedules that match, and returns them
// as sorted lines for a notice.
func (r *Router) dropSchedules(server string, match func(state.Schedule) bool) []string {
	all, err := r.opt.Registry.Schedules.List()
	if err != nil {
		r.opt.Log.Error("could not read the schedules", "err", err)
		return nil
	}
	var lines []string
	for id, s := range all {
		if s.Server != server || !match(s) {
			continue
		}
		if err := r.opt.Registry.Schedules.Delete(r.ctx, id); err != nil {
			r.opt.Log.Error("could not delete a schedule whose place is gone", "schedule", id, "err", err)
			continue
		}
		r.schedTold.Delete(id)
		lines = append(lines, fmt.Sprintf("%s: %s", cmp.Or(s.Cron, s.When), chat.Clip(schedule.OneLine(s.Prompt), 100)))
	}
	slices.Sort(lines)
	return lines
}

// runScheduled posts the prompt as from the schedule and queues it as the
// owner's message, in tg or in a new thread of it.
func (r *Router) runScheduled(s state.Schedule, tg target, log *slog.Logger) {
	ch, parent := s.ChannelID, s.ParentID
	if s.NewThread {
		ch = tg.rt.project.ChannelID
		name := chat.Clip(schedule.OneLine(s.Prompt), maxThreadName)
		tid, err := r.opt.Replier.StartThread(r.ctx, s.Server, ch, name)
		if err != nil {
			log.Error("could not start a scheduled prompt's thread", "err", err)
			r.send(s.Server, ch, "⚠️ Could not start the thread for a scheduled prompt: "+chat.ErrText(err))
			return
		}
		tg = target{key: session.ThreadKey(tg.rt.server.Name, tg.rt.project.Name, tid), rt: tg.rt, threadID: tid}
		ch, parent = tid, ch
		r.rememberThreadName(tg, name)
	}
	post := fmt.Sprintf("⏰ Scheduled by <@%s> (%s):\n>>> %s", s.Owner, cmp.Or(s.Cron, s.When), s.Prompt)
	ctx, cancel := context.WithTimeout(r.ctx, time.Minute)
	msgID, err := r.opt.Replier.Post(ctx, s.Server, ch, chat.Message{Content: chat.Clip(post, chat.Limit)})
	cancel()
	if err != nil {
		log.Error("could not post a scheduled prompt", "err", err)
	}
	r.enqueue(tg, item{ev: chat.MessageEvent{Server: s.Server, ChannelID: ch, ParentID: parent, MessageID: msgID,
		Author: chat.User{ID: s.Owner}, Content: s.Prompt}, own: true}) // catchup.go
}
