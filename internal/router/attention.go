package router

import (
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/state"
)

// usageCommand is /usage: what the statusLine last reported for every
// session of the channel's project (model, context, cost, lines, plan limits).
var usageCommand = chat.CommandSpec{Name: "usage", Description: "Model, context, cost and plan limits"}

// usageText lists the figures of the project's sessions, the channel's own
// first, then its threads', latest figures first. Thread sessions are never
// forgotten, so the list is cut to one message, saying how many it left out.
func (r *Router) usageText(tg target) string {
	sessions, err := r.opt.Store.Sessions.List()
	if err != nil && len(sessions) == 0 {
		return "⚠️ " + chat.ErrText(err)
	}
	ext, err := state.OpenExtras(r.opt.Store.Dir)
	if err != nil {
		return "⚠️ " + chat.ErrText(err)
	}
	type entry struct {
		key, line string
		thread    bool
		at        time.Time // of its figures; zero: none yet
	}
	var entries []entry
	now := r.now()
	figures := false
	for k, s := range sessions {
		if s.Server != tg.rt.server.Name || s.Project != tg.rt.project.Name {
			continue
		}
		e := entry{key: k, thread: s.ThreadID != ""}
		name := "channel session"
		if e.thread {
			name = "thread <#" + s.ThreadID + ">"
		}
		st, err := ext.Statuses.Get(s.ClaudeSessionID)
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
	head := fmt.Sprintf("**Usage — %s**\n", tg.rt.label()) // open.go
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

// continueAtResetButton arms a Continue at reset offer: the daemon sends
// "continue" to the session once the limit's reset time has passed.
func (r *Router) continueAtResetButton(ev chat.ComponentEvent, args []string, resp chat.Responder) {
	ext, err := state.OpenExtras(r.opt.Store.Dir)
	if err != nil {
		_ = resp.Respond(chat.Reply{Content: "⚠️ " + chat.ErrText(err), Ephemeral: true})
		return
	}
	all, _ := ext.Resumes.List()
	key := ""
	for k, res := range all {
		if res.Server == ev.Server && res.ChannelID == ev.ChannelID && chat.ArgIs(args[0], k) {
			key = k
		}
	}
	if key == "" {
		_ = resp.Respond(chat.Reply{Content: "This offer is no longer open: \"continue\" was sent already, or a newer limit replaced it.", Ephemeral: true})
		return
	}
	res, err := ext.Resumes.Update(r.ctx, key, func(x *state.Resume) error {
		x.Armed, x.ArmedBy = true, ev.User.ID
		return nil
	})
	if err != nil {
		_ = resp.Respond(chat.Reply{Content: "⚠️ " + chat.ErrText(err), Ephemeral: true})
		return
	}
	r.opt.Log.Info("continue at reset armed", "session", key, "at", res.At, "by", ev.User.ID)
	_, _ = resp.Update(chat.Message{Content: fmt.Sprintf("⏰ ccbridge will send \"continue\" to Claude at %s (in %s), when the limit resets. Armed by %s.",
		res.At.UTC().Format("15:04 MST"), state.Until(res.At.Sub(r.now())), chat.Mention(ev.User))})
}
