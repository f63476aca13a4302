package state

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Summary is the one-line summary of a status: the footer of replies
// (without Discord's subtext marker) and ccbridge's status line.
// Figures that are absent are left out.
func (s Status) Summary(now time.Time) string {
	var parts []string
	if s.Model != "" {
		parts = append(parts, s.Model)
	}
	if s.HasContext {
		parts = append(parts, "ctx "+percent(s.ContextPct))
	}
	if s.CostUSD > 0 {
		parts = append(parts, fmt.Sprintf("$%.2f", s.CostUSD))
	}
	if l := s.FiveHour; l != nil {
		t := "5h " + percent(l.UsedPct)
		if !l.ResetsAt.IsZero() && l.ResetsAt.After(now) {
			t += " (resets " + Until(l.ResetsAt.Sub(now)) + ")"
		}
		parts = append(parts, t)
	}
	if l := s.SevenDay; l != nil {
		parts = append(parts, "7d "+percent(l.UsedPct))
	}
	return strings.Join(parts, " · ")
}

func percent(p float64) string {
	if p > 0 && p < 1 {
		return "<1%"
	}
	return fmt.Sprintf("%d%%", int(math.Round(p)))
}

// Until writes a wait like 2h30m, 45m or 3d4h.
func Until(d time.Duration) string {
	m := int(math.Ceil(d.Minutes()))
	switch {
	case m >= 24*60:
		return fmt.Sprintf("%dd%dh", m/(24*60), m%(24*60)/60)
	case m >= 60 && m%60 == 0:
		return fmt.Sprintf("%dh", m/60)
	case m >= 60:
		return fmt.Sprintf("%dh%dm", m/60, m%60)
	}
	return fmt.Sprintf("%dm", m)
}

// Cache writes a record that is only a cache (what a hook last saw, cheap
// to lose in a power cut): atomically, like Update, but without fsync, so
// the statusLine command, which runs after every assistant message, stays
// within its budget.
func (c *Collection[T]) Cache(ctx context.Context, key string, v T) error {
	return c.cache(ctx, key, v)
}

func (c *collection) cache(ctx context.Context, key string, v any) error {
	p, err := c.path(key)
	if err != nil {
		return err
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", key, err)
	}
	b, err := json.Marshal(envelope{Version: c.version, UpdatedAt: time.Now().UTC(), Data: data})
	if err != nil {
		return fmt.Errorf("encode %s: %w", key, err)
	}
	unlock, err := c.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	f, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", key, err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", key, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", key, err)
	}
	if err := os.Rename(f.Name(), p); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", key, err)
	}
	return nil
}
