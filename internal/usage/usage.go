// Package usage is what /usage shows, the figures Claude's statusLine last
// reported for a project's sessions, and the Continue at reset offer a
// plan limit gets: which offer a click arms and what it says. It knows no
// front end: it reads state through small interfaces and answers in
// chat's vocabulary.
package usage

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/state"
)

// Command is /usage.
var Command = chat.CommandSpec{Name: "usage", Description: "Model, context, cost and plan limits"}

// Statuses finds a Claude session's last figures by its id.
type Statuses interface {
	Get(claudeSessionID string) (state.Status, error)
}

// Text lists the figures of the project's sessions (label names it), the
// channel's own first, then its threads', latest figures first. Thread
// sessions are never forgotten, so the list is cut to one message, saying
// how many it left out.
func Text(label, server, project string, sessions map[string]state.Session, statuses Statuses, now time.Time) string {
	type entry struct {
		key, line string
		thread    bool
		at        time.Time // of its figures; zero: none yet
	}
	var entries []entry
	figures := false
	for k, s := range sessions {
		if s.Server != server || s.Project != project {
			continue
		}
		e := entry{key: k, thread: s.ThreadID != ""}
		name := "channel session"
		if e.thread {
			name = "thread <#" + s.ThreadID + ">"
		}
		st, err := statuses.Get(s.ClaudeSessionID)
		if s.ClaudeSessionID == "" || err != nil {
			e.line = "• " + name + ": no figures yet"
			entries = append(entries, e)
			continue
		}
		figures, e.at = true, st.At
		var b strings.Builder
		fmt.Fprintf(&b, "• %s: %s", name, st.Summary(now))
		if st.LinesAdded+st.LinesRemoved > 0 {
			fmt.Fprintf(&b, " · +%d −%d lines", st.LinesAdded, st.LinesRemoved)
		}
		if l := st.SevenDay; l != nil && !l.ResetsAt.IsZero() && l.ResetsAt.After(now) {
			fmt.Fprintf(&b, " (7d resets %s)", state.Until(l.ResetsAt.Sub(now)))
		}
		fmt.Fprintf(&b, " · updated %s ago", now.Sub(st.At).Round(time.Second))
		e.line = chat.Clip(b.String(), 300)
		entries = append(entries, e)
	}
	sort.Slice(entries, func(i, j int) bool {
		a, b := entries[i], entries[j]
		if a.thread != b.thread {
			return !a.thread
		}
		if !a.at.Equal(b.at) {
			return a.at.After(b.at)
		}
		return a.key < b.key
	})
	head := fmt.Sprintf("**Usage — %s**\n", label)
	if len(entries) == 0 {
		return head + "No session of this project has run yet."
	}
	foot := ""
	if figures {
		foot = "\n-# Plan limits (5h, 7d) show only for claude.ai plans; with an API key Claude does not report them."
	}
	room := chat.Limit - utf8.RuneCountInString(head+foot) - len("\n… and 99999 more session(s) not shown")
	var b strings.Builder
	shown := 0
	for _, e := range entries {
		if utf8.RuneCountInString(b.String())+utf8.RuneCountInString(e.line)+1 > room {
			break
		}
		b.WriteString(e.line + "\n")
		shown++
	}
	if left := len(entries) - shown; left > 0 {
		fmt.Fprintf(&b, "… and %d more session(s) not shown\n", left)
	}
	return strings.TrimSpace(head + b.String() + strings.TrimPrefix(foot, "\n"))
}

// Resumes are the Continue at reset offers, by session key.
type Resumes interface {
	List() (map[string]state.Resume, error)
	Update(ctx context.Context, key string, fn func(*state.Resume) error) (state.Resume, error)
}

// ErrNoOffer: the offer a click names is gone.
var ErrNoOffer = errors.New("no such Continue at reset offer")

// NoOfferText is what a click on an offer that is gone is told.
const NoOfferText = "This offer is no longer open: \"continue\" was sent already, or a newer limit replaced it."

// Arm arms the Continue at reset offer a click in server's channelID
// names (arg, the control's argument, matched by chat.ArgIs), by user:
// the daemon sends "continue" to the session once the limit resets.
func Arm(ctx context.Context, resumes Resumes, server, channelID, arg, user string) (key string, res state.Resume, err error) {
	all, _ := resumes.List()
	for k, r := range all {
		if r.Server == server && r.ChannelID == channelID && chat.ArgIs(arg, k) {
			key = k
		}
	}
	if key == "" {
		return "", state.Resume{}, ErrNoOffer
	}
	res, err = resumes.Update(ctx, key, func(x *state.Resume) error {
		x.Armed, x.ArmedBy = true, user
		return nil
	})
	if err != nil {
		return "", state.Resume{}, fmt.Errorf("arm continue at reset: %w", err)
	}
	return key, res, nil
}

// ArmedText replaces an offer once armed.
func ArmedText(res state.Resume, now time.Time, by chat.User) string {
	return fmt.Sprintf("⏰ ccbridge will send \"continue\" to Claude at %s (in %s), when the limit resets. Armed by %s.",
		res.At.UTC().Format("15:04 MST"), state.Until(res.At.Sub(now)), chat.Mention(by))
}
