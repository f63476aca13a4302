package router

import (
	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/session"
)

// table is what the router reads of the config: the config itself and the
// maps built from it. A reload replaces it whole, so a reader sees one
// config or the next, never a mix.
type table struct {
	cfg    *config.Config
	routes map[string]route // channel id → project
	owners map[string]map[string]bool
}

func newTable(cfg *config.Config) *table {
	t := &table{cfg: cfg, routes: map[string]route{}, owners: map[string]map[string]bool{}}
	for _, s := range cfg.Servers {
		t.owners[s.Name] = map[string]bool{}
		for _, o := range s.OwnerIDs {
			t.owners[s.Name][o] = true
		}
		for _, p := range s.Projects {
			t.routes[p.ChannelID] = route{server: s, project: p}
		}
	}
	return t
}

// startTargets are the sessions the table starts with the daemon
// (startup = true), by key.
func (t *table) startTargets() map[string]target {
	out := map[string]target{}
	for _, rt := range t.routes {
		if rt.project.Startup {
			key := rt.server.Name + "-" + rt.project.Name
			out[key] = target{key: key, rt: rt}
		}
		for _, th := range rt.project.Threads {
			if th.Startup {
				key := session.ThreadKey(rt.server.Name, rt.project.Name, th.ThreadID)
				out[key] = target{key: key, rt: rt, threadID: th.ThreadID}
			}
		}
	}
	return out
}

// Reconfigure makes the router use cfg from the next event on: an owner
// removed is refused at once, a project added routes, a project removed no
// longer does. Sessions already running are not touched; the next one
// started gets its project's new settings. After StartConfigured, a
// project or thread that now has startup = true and had not is started.
func (r *Router) Reconfigure(cfg *config.Config) {
	t := newTable(cfg)
	old := r.tab.Swap(t)
	if old == nil || !r.started.Load() || r.ctx.Err() != nil {
		return
	}
	before := old.startTargets()
	for key, tg := range t.startTargets() {
		if _, ok := before[key]; !ok {
			r.startInBackground(tg)
		}
	}
}

// conf is the config in use now.
func (r *Router) conf() *config.Config { return r.tab.Load().cfg }

// routeTable is the project channels of the config in use now.
func (r *Router) routeTable() map[string]route { return r.tab.Load().routes }

// current is rt as cfg has it (a worker holds the route it started
// with); rt itself when its project is gone, or is a folder opened with
// /open.
func current(cfg *config.Config, rt route) route {
	for _, s := range cfg.Servers {
		if s.Name != rt.server.Name {
			continue
		}
		for _, p := range s.Projects {
			if p.Name == rt.project.Name {
				return route{server: s, project: p}
			}
		}
	}
	return rt
}
