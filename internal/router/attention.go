package router

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/state"
)

// usageCommand is /usage: what the statusLine last reported for every
// session of the channel's project (model, context, cost, lines, plan limits).
var usageCommand = chat.CommandSpec{Name: "usage", Description: "Show model, context, cost and plan limits of this project's sessions"}

// usageText lists the figures of the project's sessions, the channel's own
// first, then its threads'.
func (r *Router) usageText(tg target) string {
	sessions, err := r.opt.Store.Sessions.List()
	if err != nil && len(sessions) == 0 {
		return "⚠️ " + err.Error()
	}
	ext, err := state.OpenExtras(r.opt.Store.Dir)
	if err != nil {
		return "⚠️ " + err.Error()
	}
	var keys []string
	for k, s := range sessions {
		if s.Server == tg.rt.server.Name && s.Project == tg.rt.project.Name {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := sessions[keys[i]], sessions[keys[j]]
		if (a.ThreadID == "") != (b.ThreadID == "") {
			return a.ThreadID == ""
		}
		return keys[i] < keys[j]
	})
	now := r.now()
	var b strings.Builder
	fmt.Fprintf(&b, "**Usage — %s**\n", tg.rt.project.Name)
	shown := 0
	for _, k := range keys {
		s := sessions[k]
		name := "channel session"
		if s.ThreadID != "" {
			name = "thread <#" + s.ThreadID + ">"
		}
		st, err := ext.Statuses.Get(s.ClaudeSessionID)
		if s.ClaudeSessionID == "" || err != nil {
			fmt.Fprintf(&b, "• %s: no figures yet\n", name)
			continue
		}
		shown++
		fmt.Fprintf(&b, "• %s: %s", name, st.Summary(now))
		if st.LinesAdded+st.LinesRemoved > 0 {
			fmt.Fprintf(&b, " · +%d −%d lines", st.LinesAdded, st.LinesRemoved)
		}
		if l := st.SevenDay; l != nil && !l.ResetsAt.IsZero() && l.ResetsAt.After(now) {
			fmt.Fprintf(&b, " (7d resets %s)", state.Until(l.ResetsAt.Sub(now)))
		}
		fmt.Fprintf(&b, " · updated %s ago\n", now.Sub(st.At).Round(time.Second))
	}
	if len(keys) == 0 {
		b.WriteString("No session of this project has run yet.\n")
	} else if shown > 0 {
		b.WriteString("-# Plan limits (5h, 7d) show only for claude.ai plans; with an API key Claude does not report them.")
	}
	return strings.TrimSpace(b.String())
}

// continueAtResetButton arms a Continue at reset offer: the daemon sends
// "continue" to the session once the limit's reset time has passed.
func (r *Router) continueAtResetButton(ev chat.ComponentEvent, args []string, resp chat.Responder) {
	ext, err := state.OpenExtras(r.opt.Store.Dir)
	if err != nil {
		_ = resp.Respond(chat.Reply{Content: "⚠️ " + err.Error(), Ephemeral: true})
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
		_ = resp.Respond(chat.Reply{Content: "⚠️ " + err.Error(), Ephemeral: true})
		return
	}
	r.opt.Log.Info("continue at reset armed", "session", key, "at", res.At, "by", ev.User.ID)
	_ = resp.Update(chat.Message{Content: fmt.Sprintf("⏰ ccbridge will send \"continue\" to Claude at %s (in %s), when the limit resets. Armed by %s.",
		res.At.UTC().Format("15:04 MST"), state.Until(res.At.Sub(r.now())), mention(ev.User))})
}
