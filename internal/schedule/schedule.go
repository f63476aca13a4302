// Package schedule reads when a scheduled prompt runs: "in 20m", "in 2h",
// "at 09:00" (the machine's local time, next occurrence) or a five-field cron
// line ("0 9 * * 1-5", parsed by robfig/cron). It knows nothing of Discord or
// sessions.
package schedule

import (
	"fmt"
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
	sched, err := parser.Parse(s)
	if err != nil {
		return When{}, fmt.Errorf(`%q is not a time: use "in 20m", "in 2h", "at 09:00", or a cron line of five fields such as "0 9 * * 1-5" (%v)`, text, err)
	}
	next := sched.Next(now)
	if next.IsZero() {
		return When{}, fmt.Errorf("%q never runs", text)
	}
	return When{Cron: s, Next: next}, nil
}

// parser takes standard five-field lines (minute hour day month weekday) and
// the @hourly / @daily / @weekly descriptors.
var parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// After is the first run of a cron line strictly after t.
func After(cronLine string, t time.Time) (time.Time, error) {
	sched, err := parser.Parse(cronLine)
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
