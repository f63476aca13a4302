package router

import (
	"slices"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/config"
)

// reconfigured is a copy of r's config changed by edit, as a reload reads
// a new file: the running one is never written to.
func reconfigured(t *testing.T, r *Router, edit func(c *config.Config)) *config.Config {
	t.Helper()
	c := *r.conf()
	c.Servers = slices.Clone(c.Servers)
	for i := range c.Servers {
		c.Servers[i].OwnerIDs = slices.Clone(c.Servers[i].OwnerIDs)
		c.Servers[i].Projects = slices.Clone(c.Servers[i].Projects)
	}
	edit(&c)
	return &c
}

// An owner added may act at once; one removed is refused at once, on
// messages and on clicks.
func TestReconfigureOwners(t *testing.T) {
	r, _, _, l, _ := newRouter(t)
	const newOwner = "100000000000000055"
	r.Reconfigure(reconfigured(t, r, func(c *config.Config) { c.Servers[0].OwnerIDs = []string{newOwner} }))

	ev := msg("from the old owner")
	r.HandleMessage(ev)
	ev = msg("from the new owner")
	ev.MessageID, ev.Author.ID = "m2", newOwner
	r.HandleMessage(ev)
	l.waitFor(t, "react m2 ✅")
	if slices.Contains(l.all(), `deliver home-api "from the old owner"`) {
		t.Fatalf("a removed owner's message was delivered: %q", l.all())
	}
	r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, Name: "stop"}, fakeResponder{l: l})
	l.waitFor(t, "respond ephemeral=true "+refusalForOthers)
}

// A project added routes; one removed no longer does, and its running
// session is left alone (not stopped).
func TestReconfigureProjects(t *testing.T) {
	r, _, _, l, _ := newRouter(t)
	r.HandleMessage(msg("before"))
	l.waitFor(t, "react m1 ✅")

	const webChannel = "100000000000000044"
	dir := t.TempDir()
	r.Reconfigure(reconfigured(t, r, func(c *config.Config) {
		c.Servers[0].Projects = []config.Project{{Name: "web", ChannelID: webChannel, Path: dir, Progress: "text"}}
	}))
	ev := msg("to web")
	ev.ChannelID, ev.MessageID = webChannel, "m2"
	r.HandleMessage(ev)
	l.waitFor(t, "react m2 ✅")
	ev = msg("to the removed project")
	ev.MessageID = "m3"
	r.HandleMessage(ev)
	time.Sleep(50 * time.Millisecond)
	for _, op := range l.all() {
		if op == `deliver home-api "to the removed project"` || op == "stop home-api" {
			t.Fatalf("the removed project's channel still routes, or its session was touched: %q", l.all())
		}
	}
	if !slices.Contains(l.all(), `deliver home-web "to web"`) {
		t.Fatalf("the new project did not route: %q", l.all())
	}
}

// A session's worker, started under the old config, starts the next
// session with the project's new settings.
func TestReconfigureNextSessionGetsNewSettings(t *testing.T) {
	r, ss, _, l, _ := newRouter(t)
	r.HandleMessage(msg("first"))
	l.waitFor(t, "react m1 ✅")
	r.Reconfigure(reconfigured(t, r, func(c *config.Config) { c.Servers[0].Projects[0].Model = "opus" }))
	ev := msg("second")
	ev.MessageID = "m2"
	r.HandleMessage(ev)
	l.waitFor(t, "react m2 ✅")
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if len(ss.targets) != 2 || ss.targets[0].Model != "" || ss.targets[1].Model != "opus" {
		t.Fatalf("targets = %+v", ss.targets)
	}
}

// Once the daemon has started its startup projects, a reload that adds
// one (or sets startup on one) starts it; the others are left alone.
func TestReconfigureStartsAddedStartupProjects(t *testing.T) {
	r, _, _, l, _ := newRouter(t)
	r.StartConfigured() // none has startup = true
	dir := t.TempDir()
	r.Reconfigure(reconfigured(t, r, func(c *config.Config) {
		c.Servers[0].Projects = append(c.Servers[0].Projects, config.Project{Name: "web", ChannelID: "100000000000000044", Path: dir, Progress: "text", Startup: true})
	}))
	l.waitFor(t, "ensure home-web")
	r.Reconfigure(reconfigured(t, r, func(c *config.Config) { c.Servers[0].Projects[0].Model = "opus" }))
	time.Sleep(50 * time.Millisecond)
	if got := l.all(); !slices.Equal(got, []string{"ensure home-web"}) {
		t.Fatalf("ops = %q", got)
	}
}
