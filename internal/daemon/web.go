package daemon

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/execx"
	"github.com/ccbridge/ccbridge/internal/policy"
	"github.com/ccbridge/ccbridge/internal/redact"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/web"
	"github.com/ccbridge/ccbridge/internal/weblink"
	"github.com/ccbridge/ccbridge/internal/worktree"
)

// startWeb serves the read-only web view when [web] is on; the links are
// nil when it is off. A view that cannot start (its address in use, a bad
// certificate) is logged and left out: it never stops the bridge. Its
// links are then weblink.Down, so that /web says why.
func startWeb(cfg *config.Config, store *state.Store, registry *state.Registry, durable string, log *slog.Logger) (*web.Server, weblink.Links) {
	if !cfg.Web.Enabled() {
		return nil, nil
	}
	h, err := webHandler(cfg, store, registry, durable, log)
	if err != nil {
		log.Error("the web view cannot start; the bridge runs on without it", "err", err)
		return nil, weblink.Down{Err: err}
	}
	srv := web.NewServer(h)
	if err := srv.Start(); err != nil {
		log.Error("the web view cannot start; the bridge runs on without it", "listen", cfg.Web.Listen, "err", err)
		return nil, weblink.Down{Err: err}
	}
	if !cfg.Web.Loopback() && !cfg.Web.TLS() {
		log.Warn("the web view is served without TLS on an address other machines can reach: a link crosses the network in the clear", "listen", cfg.Web.Listen)
	}
	log.Info("web view serving", "addr", srv.Addr())
	return srv, &web.Links{H: h}
}

// webHandler is the web view's handler: the daemon serves it, and ccbridge
// mcp makes links with it (the same key: they open the daemon's pages).
func webHandler(cfg *config.Config, store *state.Store, registry *state.Registry, durable string, log *slog.Logger) (*web.Handler, error) {
	home, _ := os.UserHomeDir()
	sessions, err := newWebSessions(store, registry)
	if err != nil {
		return nil, err
	}
	private := []string{store.Dir.Root(), durable, cfg.Path}
	for _, s := range cfg.Servers {
		if s.TokenFile != "" {
			private = append(private, s.TokenFile)
		}
	}
	return web.New(web.Options{Sessions: sessions, Diffs: webDiffs{git: worktree.New(execx.Exec{}), registry: registry},
		StateDir: durable, Redact: redact.String, ReadDenied: web.PolicyReadDenied(sessions.rules, home), Private: private,
		LinkTTL: cfg.Web.LinkTTL.Duration, Listen: cfg.Web.Listen, PublicURL: cfg.Web.PublicURL, TLSCert: cfg.Web.TLSCert, TLSKey: cfg.Web.TLSKey,
		Logger: log.With("part", "web")})
}

// webSessions shows the web view the sessions this daemon runs, as the
// panel lists them.
type webSessions struct {
	store    *state.Store
	registry *state.Registry
	policies *state.Collection[state.Policies]
	statuses *state.Collection[state.Status]
}

func newWebSessions(store *state.Store, registry *state.Registry) (webSessions, error) {
	policies, err := state.OpenPolicies(store.Dir)
	if err != nil {
		return webSessions{}, err
	}
	statuses, err := state.OpenStatuses(store.Dir)
	if err != nil {
		return webSessions{}, err
	}
	return webSessions{store: store, registry: registry, policies: policies, statuses: statuses}, nil
}

// Session is one session with what only its own page shows: the footer's
// figures and its cards.
func (w webSessions) Session(key string) (web.Session, bool) {
	s, err := w.store.Sessions.Get(key)
	if err != nil {
		return web.Session{}, false
	}
	ws := w.session(key, s)
	if st, err := w.statuses.Get(s.ClaudeSessionID); s.ClaudeSessionID != "" && err == nil {
		ws.Figures = st.Summary(time.Now())
	}
	ws.Cards = w.cards(key)
	return ws, true
}

// cards are the session's prompt cards the state still holds (decided
// ones are kept a while after: keepResolved), oldest first.
func (w webSessions) cards(key string) []web.Card {
	all, err := w.store.Requests.List()
	if err != nil {
		return nil
	}
	var out []web.Card
	for _, r := range all {
		if r.Session == key {
			out = append(out, web.Card{Tool: r.ToolName, Input: string(r.ToolInput), Status: r.Status, Outcome: r.Outcome, At: r.Created})
		}
	}
	slices.SortFunc(out, func(a, b web.Card) int { return a.At.Compare(b.At) })
	return out
}

func (w webSessions) List(server string) []web.Session {
	all, err := w.store.Sessions.List()
	if err != nil {
		return nil
	}
	var out []web.Session
	for key, s := range all {
		if s.Server == server {
			out = append(out, w.session(key, s))
		}
	}
	slices.SortFunc(out, func(a, b web.Session) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func (w webSessions) session(key string, s state.Session) web.Session {
	name := s.Project
	reg, _ := w.registry.Sessions.Get(key)
	if reg.ThreadName != "" {
		name += " › " + reg.ThreadName
	}
	status := "idle"
	if s.Busy {
		status = "working"
	}
	return web.Session{Key: key, Server: s.Server, Name: name, Dir: s.Cwd, Transcript: s.TranscriptPath, Branch: reg.Branch,
		Status: status, Updated: s.LastEventAt}
}

// rules are the [policy] rules of a session's place, read from the
// record its hooks read (so a config reload reaches the view at once). A
// session of another front end (ccbridge mcp) has the rules of the project
// whose folder holds it, as its hooks do.
func (w webSessions) rules(ws web.Session) policy.Set {
	s, err := w.store.Sessions.Get(ws.Key)
	if err != nil {
		return denyAll
	}
	pols, err := w.policies.Get(state.PoliciesKey)
	if err != nil {
		return denyAll
	}
	server, project, thread := s.Server, s.Project, s.ThreadID
	if server == "" {
		routes, _ := w.store.Routes.Get(state.RoutesKey)
		rt, _ := routes.Match(s.Cwd)
		server, project, thread = rt.Server, rt.Project, ""
	}
	r := pols.Rules(server, project, thread)
	set, _ := policy.New(r.Ask, r.Deny) // bad rules were refused at config check
	return set
}

// denyAll refuses every read: a session whose rules cannot be read shows
// no file.
var denyAll, _ = policy.New(nil, []string{"Read"})

// webDiffs computes a session's diff as /diff does: a thread's worktree
// against where it branched, anything else's uncommitted changes.
type webDiffs struct {
	git      *worktree.Git
	registry *state.Registry
}

func (d webDiffs) Diff(ctx context.Context, s web.Session) (web.Diff, error) {
	dir, base, tree := s.Dir, "HEAD", false
	if reg, err := d.registry.Sessions.Get(s.Key); err == nil && reg.Worktree != "" {
		dir, base, tree = reg.Worktree, reg.BaseCommit, true
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	diff, err := d.git.Diff(ctx, dir, base)
	if err != nil {
		return web.Diff{}, err
	}
	out := web.Diff{Patch: diff.Patch, Head: diff.Head, Uncommitted: diff.Uncommitted}
	if tree && !diff.Uncommitted {
		out.Merge = diff.Head
	}
	return out, nil
}
