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

// TestReview3EveryDescriptorRunsEverySecond: robfig/cron's @every is no
// cron line; "@every 1s" would run a prompt every second.
func TestReview3EveryDescriptorRunsEverySecond(t *testing.T) {
	now := time.Date(2026, 11, 26, 14, 30, 10, 0, time.UTC)
	for _, when := range []string{"@every 1s", "@every 1ms", "@EVERY 5m", "@reboot", "@often"} {
		w, err := Parse(when, now)
		if err == nil {
			t.Errorf("%q accepted: %+v", when, w)
			continue
		}
		if !strings.Contains(err.Error(), "five fields") || !strings.Contains(err.Error(), "@hourly") {
			t.Errorf("%q: %v, want the forms that are taken", when, err)
		}
	}
	if _, err := After("@every 1s", now); err == nil {
		t.Error("After takes @every (a schedule saved by an older ccbridge would keep running)")
	}
	for _, when := range []string{"@hourly", "@daily", "@midnight", "@weekly", "@monthly", "@yearly", "@annually"} {
		if w, err := Parse(when, now); err != nil || w.Cron != when {
			t.Errorf("%q: %+v, %v", when, w, err)
		}
	}
}

func TestShortestGap(t *testing.T) {
	now := time.Date(2026, 11, 26, 14, 30, 10, 0, time.UTC)
	for line, want := range map[string]time.Duration{
		"* * * * *":        time.Minute,
		"*/15 * * * *":     15 * time.Minute,
		"0,1 9 * * *":      time.Minute,
		"0 9 * * 1-5":      24 * time.Hour,
		"@hourly":          time.Hour,
		"@weekly":          7 * 24 * time.Hour,
		"0 9,21 * * *":     12 * time.Hour,
		"59 23 31 12 *":    365 * 24 * time.Hour,
		"0 0 29 2 *":       4 * 365 * 24 * time.Hour, // runs once: the next one is years away
		"58,59 23 28 2 *":  time.Minute,
		"0 */4 * * *":      4 * time.Hour,
		"30 2-3 1 * *":     time.Hour,
		"0 9 * * 1":        7 * 24 * time.Hour,
		"0 9 1 * *":        28 * 24 * time.Hour,
		"*/5 9-17 * * 1-5": 5 * time.Minute,
	} {
		got, err := Shortest(line, now)
		if err != nil {
			t.Errorf("%q: %v", line, err)
			continue
		}
		if line == "0 0 29 2 *" || line == "59 23 31 12 *" || line == "0 9 1 * *" {
			if got < want {
				t.Errorf("%q: %s, want at least %s", line, got, want)
			}
			continue
		}
		if got != want {
			t.Errorf("%q: %s, want %s", line, got, want)
		}
	}
}
