package router

import (
	"strings"
	"unicode/utf8"

	"github.com/ccbridge/ccbridge/internal/chat"
)

// panelAction answers the control panel: Start or Stop a project, or
// Refresh; the panel message is then redrawn in place.
func (r *Router) panelAction(ev chat.ComponentEvent, args []string, resp chat.Responder) {
	action, project := args[0], ""
	if len(args) > 1 {
		project = args[1]
	}
	if action == "choose" && len(ev.Values) == 1 {
		action, project, _ = strings.Cut(ev.Values[0], ".")
	}
	if err := resp.DeferUpdate(); err != nil {
		return
	}
	notice := ""
	if action == "start" || action == "stop" {
		notice = r.startStop(ev.Server, action, project)
	}
	m := r.opt.Panel.Render(r.ctx, ev.Server)
	if notice != "" { // the panel gives way: the notice says what just failed
		m.Content = strings.TrimSpace(chat.Fit(m.Content, chat.Limit-utf8.RuneCountInString(notice)-2) + "\n\n" + notice)
	}
	if _, err := resp.Edit(m); err != nil {
		r.opt.Log.Error("could not redraw the panel", "server", ev.Server, "err", err)
	}
}

func (r *Router) startStop(server, action, project string) string {
	var tg target
	found := false
	for _, rt := range r.routeTable() {
		if rt.server.Name == server && rt.project.Name == project {
			tg, found = target{key: rt.server.Name + "-" + rt.project.Name, rt: rt}, true
		}
	}
	if !found {
		return "⚠️ No project " + project + "."
	}
	if action == "stop" {
		if err := r.opt.Sessions.Stop(r.ctx, tg.key); err != nil {
			return "⚠️ Could not stop " + project + ": " + chat.ErrText(err)
		}
		r.opt.Log.Info("project stopped from the panel", "session", tg.key)
		return ""
	}
	t, err := r.sessionTarget(tg)
	if err == nil {
		_, _, err = r.opt.Sessions.Ensure(r.ctx, t)
	}
	if err != nil {
		return "⚠️ Could not start " + project + ": " + chat.ErrText(err)
	}
	r.opt.Log.Info("project started from the panel", "session", tg.key)
	return ""
}

// StartConfigured starts the projects and threads configured with
// startup = true; sessions already running are left alone. Once called, a
// reload that adds one starts it too (reconfigure.go).
func (r *Router) StartConfigured() {
	r.started.Store(true)
	r.warnGoneChannels() // channels.go
	for _, tg := range r.tab.Load().startTargets() {
		r.startInBackground(tg)
	}
}

func (r *Router) startInBackground(tg target) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		t, err := r.sessionTarget(tg)
		if err == nil {
			_, _, err = r.opt.Sessions.Ensure(r.ctx, t)
		}
		if err != nil {
			r.opt.Log.Error("could not start a session at startup", "session", tg.key, "err", err)
			return
		}
		r.opt.Log.Info("session started at startup", "session", tg.key)
	}()
}
