// Package schedule is what /schedule and /schedules mean: when a scheduled
// prompt runs ("in 20m", "in 2h", "at 09:00" in the machine's local time,
// next occurrence, or a five-field cron line such as "0 9 * * 1-5", parsed
// by robfig/cron), the rules a schedule must keep, and the lists of them.
// It knows no chat platform and no session: the front end's dispatch
// stores schedules and types their prompts.
package schedule

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Bounds of a one-shot: at least a second away, at most a year.
const (
	minIn = time.Second
	maxIn = 366 * 24 * time.Hour
)

// When is a parsed time expression.
type When struct {
	// Cron is the normalised cron line of a repeating schedule; "" for a
	// one-shot.
	Cron string
	// Next is the first run.
	Next time.Time
}

// Repeats reports whether the schedule runs again after Next.
func (w When) Repeats() bool { return w.Cron != "" }

// Parse reads a time expression relative to now (whose location is the
// machine's for "at" and cron).
func Parse(text string, now time.Time) (When, error) {
	s := strings.Join(strings.Fields(strings.ToLower(text)), " ")
	switch {
	case strings.HasPrefix(s, "in "):
		d, err := duration(strings.TrimPrefix(s, "in "))
		if err != nil {
			return When{}, err
		}
		return When{Next: now.Add(d).Truncate(time.Second)}, nil
	case strings.HasPrefix(s, "at "):
		t, err := time.ParseInLocation("15:04", strings.TrimPrefix(s, "at "), now.Location())
		if err != nil {
			return When{}, fmt.Errorf("%q is not a time of day: use 24-hour HH:MM, like at 09:00", text)
		}
		next := time.Date(now.Year(), now.Month(), now.Day(), t.Hour(), t.Minute(), 0, 0, now.Location())
		if !next.After(now) {
			next = next.AddDate(0, 0, 1)
		}
		return When{Next: next}, nil
	}
	sched, err := parse(s)
	if err != nil {
		return When{}, fmt.Errorf(`%q is not a time: use "in 20m", "in 2h", "at 09:00", a cron line of five fields such as "0 9 * * 1-5", or one of %s (%v)`, text, strings.Join(descriptors, ", "), err)
	}
	next := sched.Next(now)
	if next.IsZero() {
		return When{}, fmt.Errorf("%q never runs", text)
	}
	return When{Cron: s, Next: next}, nil
}

// parser takes standard five-field lines (minute hour day month weekday) and
// the descriptors; parse lets through only the descriptors named in
// descriptors: robfig/cron's "@every <duration>" is no cron line, and
// "@every 1s" would type a prompt every second.
var parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// descriptors are the words taken for a cron line, as in crontab(5).
var descriptors = []string{"@hourly", "@daily", "@midnight", "@weekly", "@monthly", "@yearly", "@annually"}

func parse(line string) (cron.Schedule, error) {
	if strings.HasPrefix(line, "@") && !slices.Contains(descriptors, strings.ToLower(line)) {
		return nil, fmt.Errorf("%s is not taken (only %s)", strings.Fields(line)[0], strings.Join(descriptors, ", "))
	}
	return parser.Parse(strings.ToLower(line))
}

// After is the first run of a cron line strictly after t.
func After(cronLine string, t time.Time) (time.Time, error) {
	sched, err := parse(cronLine)
	if err != nil {
		return time.Time{}, fmt.Errorf("cron %q: %w", cronLine, err)
	}
	return sched.Next(t), nil
}

// duration reads "20m", "2h", "1h30m", "45s" or "2d".
func duration(s string) (time.Duration, error) {
	s = strings.ReplaceAll(s, " ", "")
	var d time.Duration
	var err error
	if days, ok := strings.CutSuffix(s, "d"); ok {
		var n int
		n, err = strconv.Atoi(days)
		d = time.Duration(n) * 24 * time.Hour
	} else {
		d, err = time.ParseDuration(s)
	}
	switch {
	case err != nil:
		return 0, fmt.Errorf("%q is not a duration: use in 20m, in 2h, in 1h30m or in 2d", "in "+s)
	case d < minIn || d > maxIn:
		return 0, fmt.Errorf("in %s: a schedule runs between 1s and a year from now", s)
	}
	return d, nil
}

// Shortest is the shortest time between two runs of a cron line over the
// year after from (or up to shortestRuns runs): a line that runs once a
// year or less gets the time to its second run.
func Shortest(cronLine string, from time.Time) (time.Duration, error) {
	sched, err := parse(cronLine)
	if err != nil {
		return 0, fmt.Errorf("cron %q: %w", cronLine, err)
	}
	prev := sched.Next(from)
	end := prev.AddDate(1, 0, 0)
	var shortest time.Duration
	for range shortestRuns {
		next := sched.Next(prev)
		if next.IsZero() {
			break
		}
		if gap := next.Sub(prev); shortest == 0 || gap < shortest {
			shortest = gap
		}
		if next.After(end) || shortest <= time.Minute {
			break
		}
		prev = next
	}
	return shortest, nil
}

// shortestRuns bounds Shortest's walk: a line that runs every minute
// shows its gap at once, and one whose shortest gap is rare (two runs a
// minute apart once a day) shows it within a day's runs.
const shortestRuns = 20000
