package schedule

import (
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	loc := time.FixedZone("here", 2*3600)
	now := time.Date(2026, 11, 26, 14, 30, 10, 0, loc) // a Thursday
	for _, c := range []struct {
		when string
		next time.Time
		cron string
	}{
		{"in 20m", now.Add(20 * time.Minute), ""},
		{"in 20s", now.Add(20 * time.Second), ""},
		{"In 2h", now.Add(2 * time.Hour), ""},
		{"in 1h30m", now.Add(90 * time.Minute), ""},
		{"in 2d", now.Add(48 * time.Hour), ""},
		{"at 15:00", time.Date(2026, 11, 26, 15, 0, 0, 0, loc), ""},
		{"at 09:00", time.Date(2026, 11, 27, 9, 0, 0, 0, loc), ""}, // passed today: tomorrow
		{"at 14:30", time.Date(2026, 11, 27, 14, 30, 0, 0, loc), ""},
		{"0 9 * * 1-5", time.Date(2026, 11, 27, 9, 0, 0, 0, loc), "0 9 * * 1-5"},
		{"0  9 * * 6", time.Date(2026, 11, 28, 9, 0, 0, 0, loc), "0 9 * * 6"},
		{"*/15 * * * *", time.Date(2026, 11, 26, 14, 45, 0, 0, loc), "*/15 * * * *"},
		{"@daily", time.Date(2026, 11, 27, 0, 0, 0, 0, loc), "@daily"},
	} {
		w, err := Parse(c.when, now)
		if err != nil || !w.Next.Equal(c.next) || w.Cron != c.cron || w.Repeats() != (c.cron != "") {
			t.Errorf("%q: %+v, %v; want %s %q", c.when, w, err, c.next, c.cron)
		}
	}
	for when, want := range map[string]string{
		"tomorrow":      "is not a time",
		"in soon":       "is not a duration",
		"in 0s":         "between 1s and a year",
		"in 400d":       "between 1s and a year",
		"at 25:00":      "is not a time of day",
		"at 9am":        "is not a time of day",
		"0 9 * *":       "is not a time",
		"0 9 * * 1-5 x": "is not a time",
		"0 0 30 2 *":    "never runs",
	} {
		if _, err := Parse(when, now); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", when, err, want)
		}
	}
	next, err := After("0 9 * * 1-5", time.Date(2026, 11, 27, 9, 0, 0, 0, loc))
	if err != nil || !next.Equal(time.Date(2026, 11, 30, 9, 0, 0, 0, loc)) {
		t.Errorf("after Friday 9:00: %s, %v", next, err)
	}
}
