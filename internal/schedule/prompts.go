package schedule

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/state"
)

// /schedule types a prompt into a session at a set time, exactly as if the
// owner who scheduled it had typed it then (same queue, receipt, dialogs and
// policy). What follows is what the commands mean; the front end's
// dispatch stores the schedules and types their prompts.

// Limits of the schedule commands.
const (
	MaxPrompt = 4000
	// MissedWindow: a run missed while ccbridge was down still runs when
	// it starts if it is at most this late; later ones are reported skipped.
	MissedWindow = time.Hour
	// Kind is the kind of the schedule controls' ids (chat.ID).
	Kind = "sched"
	// listed is how many Cancel buttons one message holds.
	listed = 25
	// NewThreadFloor is the least time between two runs of a schedule
	// that starts a thread, and a Claude session, at each.
	NewThreadFloor = 5 * time.Minute
)

// Commands are /schedule and /schedules.
func Commands() []chat.CommandSpec {
	return []chat.CommandSpec{
		{Name: "schedule", Description: "Send Claude a prompt later, or by cron", Options: []chat.OptionSpec{
			{Name: "when", Description: `"in 20m", "in 2h", "at 09:00" or a cron line like "0 9 * * 1-5"`, Required: true, MaxLength: 100},
			{Name: "prompt", Description: "what to send Claude then", Required: true, MaxLength: MaxPrompt},
			{Name: "where", Description: "this channel or thread (default), or a new thread each run", Choices: []chat.Choice{{Name: "this channel or thread", Value: "this"}, {Name: "a new thread", Value: "new-thread"}}}}},
		{Name: "schedules", Description: "List the schedules, each with Cancel"},
	}
}

// Request is a /schedule command as given.
type Request struct {
	Server, ChannelID, ParentID string
	Owner                       string // who gave it: the prompt runs as theirs
	When, Prompt, Where         string // its options
	// Opened: given in an opened folder's thread, which has no other.
	Opened bool
}

// New reads a /schedule command into the schedule it sets, or says why
// it sets none (refusal, an answer as it is shown).
func New(q Request, now time.Time) (s state.Schedule, refusal string) {
	when, err := Parse(q.When, now)
	if err != nil {
		return s, "⚠️ " + chat.ErrText(err)
	}
	prompt := strings.TrimSpace(q.Prompt)
	if prompt == "" {
		return s, "⚠️ The prompt is empty: nothing to send."
	}
	newThread := q.Where == "new-thread"
	if newThread && q.Opened {
		return s, "⚠️ where: new-thread is for project channels: an opened folder has this one thread. Schedule it here (where: this)."
	}
	if newThread && when.Cron != "" {
		if why := TooOften(when.Cron, now); why != "" {
			return s, "⚠️ " + why
		}
	}
	return state.Schedule{Server: q.Server, ChannelID: q.ChannelID, ParentID: q.ParentID, NewThread: newThread,
		Prompt: prompt, When: q.When, Cron: when.Cron, Next: when.Next, Owner: q.Owner, Created: now}, ""
}

// Scheduled answers a /schedule that set s.
func Scheduled(s state.Schedule) string {
	return fmt.Sprintf("⏰ Scheduled %s: %s.\n>>> %s", Describe(s), Where(s), chat.Clip(s.Prompt, 1500))
}

// TooOften says why a where:new-thread cron line runs too often, or "".
func TooOften(cronLine string, now time.Time) string {
	gap, err := Shortest(cronLine, now)
	switch {
	case err != nil:
		return chat.ErrText(err)
	case gap < NewThreadFloor:
		return fmt.Sprintf("`%s` runs %s apart at the closest, and where: new-thread starts a thread and a Claude session at each run: its runs must be at least %s apart.", cronLine, gap, NewThreadFloor)
	}
	return ""
}

// Describe says when a schedule runs, in Discord's timestamps (each
// reader sees their own time zone).
func Describe(s state.Schedule) string {
	at := fmt.Sprintf("<t:%d:F> (<t:%d:R>)", s.Next.Unix(), s.Next.Unix())
	if s.Cron == "" {
		return "for " + at
	}
	return fmt.Sprintf("`%s` (the machine's time), next %s", s.Cron, at)
}

// Where says where a schedule's prompt goes.
func Where(s state.Schedule) string {
	if s.NewThread {
		return fmt.Sprintf("in a new thread of <#%s> each time", cmp.Or(s.ParentID, s.ChannelID))
	}
	return fmt.Sprintf("in <#%s>", s.ChannelID)
}

// Scope is what /schedules lists where it runs: the schedules of one
// project (its channel and its threads), or of one opened folder's
// thread. Never the whole server's: a project channel's readers may not
// read another's.
type Scope struct {
	Server  string
	Project string // the project channel, or
	Thread  string // the opened folder's thread
}

// Holds reports whether s is listed in the scope.
func (sc Scope) Holds(s state.Schedule) bool {
	switch {
	case s.Server != sc.Server:
		return false
	case sc.Thread != "":
		return s.ChannelID == sc.Thread
	}
	return cmp.Or(s.ParentID, s.ChannelID) == sc.Project
}

// List lists the schedules of a scope, soonest first, with a Cancel
// control each (cancelID names it); note goes first.
func List(all map[string]state.Schedule, sc Scope, note string, cancelID func(id string) (string, error)) chat.Reply {
	type item struct {
		id string
		s  state.Schedule
	}
	var items []item
	for id, s := range all {
		if sc.Holds(s) {
			items = append(items, item{id, s})
		}
	}
	slices.SortFunc(items, func(a, b item) int { return cmp.Or(a.s.Next.Compare(b.s.Next), strings.Compare(a.id, b.id)) })
	var b strings.Builder
	if note != "" {
		b.WriteString(note + "\n")
	}
	if len(items) == 0 {
		if sc.Thread != "" {
			b.WriteString("No schedules in this thread. Set one with /schedule.")
		} else {
			b.WriteString("No schedules for this project on this machine. Set one with /schedule.")
		}
		return chat.Reply{Content: b.String()}
	}
	var rows []chat.Row
	for i, it := range items {
		if i == listed {
			fmt.Fprintf(&b, "…and %d more.", len(items)-i)
			break
		}
		line := fmt.Sprintf("**%d.** %s, %s: %s\n", i+1, Describe(it.s), Where(it.s), chat.Clip(OneLine(it.s.Prompt), 80))
		if len([]rune(b.String()))+len([]rune(line)) > chat.Limit-60 {
			fmt.Fprintf(&b, "…and %d more.", len(items)-i)
			break
		}
		b.WriteString(line)
		id, err := cancelID(it.id)
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

// OneLine is a prompt on one line, as lists quote it.
func OneLine(prompt string) string { return strings.Join(strings.Fields(prompt), " ") }

// Due fires every schedule of all that is due at now(), soonest first,
// and returns when the next one is (zero: none). fire runs one and
// returns when it runs next (zero: never).
func Due(all map[string]state.Schedule, now func() time.Time, fire func(id string, s state.Schedule, now time.Time) time.Time) time.Time {
	ids := make([]string, 0, len(all))
	for id := range all {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int { return all[a].Next.Compare(all[b].Next) })
	var next time.Time
	for _, id := range ids {
		s := all[id]
		t := now()
		if s.Next.After(t) {
			if next.IsZero() || s.Next.Before(next) {
				next = s.Next
			}
			continue
		}
		if after := fire(id, s, t); !after.IsZero() && (next.IsZero() || after.Before(next)) {
			next = after
		}
	}
	return next
}

// Archived says why a schedule set in an archived thread skips a run: it
// would start the thread's session again where nobody looks.
func Archived(s state.Schedule, threadID string) string {
	why := fmt.Sprintf("<#%s> is archived, and a schedule does not start an archived thread's Claude again.", threadID)
	if s.Cron == "" {
		return why + " This one-shot will not run."
	}
	return why + " Write in the thread to bring it back (the schedule then runs again), or cancel it with /schedules."
}
