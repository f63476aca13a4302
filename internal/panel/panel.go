// Package panel draws each server's control panel: one message in the
// general channel, edited in place, that shows every project (and its
// threads, worktrees and pending prompts) with Start and Stop buttons. The
// router answers its buttons; the daemon keeps it current.
package panel

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/worktree"
)

// IDKind is the custom_id kind of panel components.
const IDKind = "panel"

// Sessions is what the panel asks of the session manager.
type Sessions interface {
	Status(ctx context.Context, key string) (session.Status, error)
}

// Trees is what the panel asks of git.
type Trees interface {
	Root(ctx context.Context, dir string) (string, error)
	Summary(ctx context.Context, path, base string) (worktree.Summary, error)
	Orphans(ctx context.Context, repo string, known map[string]bool) ([]worktree.Tree, error)
}

// Panel renders panels.
type Panel struct {
	Config   *config.Config
	Store    *state.Store
	Registry *state.Registry
	Sessions Sessions
	Trees    Trees
	Instance string
	// Fleet is the view of the other machines sharing the bots (nil: none).
	Fleet *Fleet
	// Problem, when set, is shown under the header: something that stops
	// every session from starting (a Claude command not found).
	Problem string
	// Web: the web view is served, and the panel offers 🌐, whose click
	// the router answers with its links, privately. The panel itself never
	// carries a link: a link is a capability, and the panel channel may be
	// one every member of the server reads.
	Web bool

	live    atomic.Pointer[snapshot] // set by Reconfigure (reconfigure.go)
	mu      sync.Mutex               // guards sums
	sums    map[string]summaryAt
	cmu     sync.Mutex        // guards connect (not held across git, as mu is)
	connect map[string]string // server → why its bot is not connected (connect.go)
	now     func() time.Time  // nil: time.Now
}

// summaryAt is what git said of a worktree, and when.
type summaryAt struct {
	sum worktree.Summary
	err error
	at  time.Time
}

// Panel pacing: a panel is redrawn at the latest every heartbeat, which
// the other machines read back, and at the earliest every minGap.
const (
	minGap    = 3 * time.Second
	maxBeat   = time.Minute
	beatParts = 3 // heartbeats within the unreachable-after time
)

// Heartbeat is how often a panel is redrawn at the least: three times
// within the time after which a machine counts as unreachable.
func Heartbeat(unreachable time.Duration) time.Duration {
	return max(minGap, min(maxBeat, unreachable/beatParts))
}

// summary is what the panel shows of a worktree, from git at most once a
// heartbeat: redraws follow every change of a session, request or
// record, and git would otherwise run for every thread on each.
func (p *Panel) summary(ctx context.Context, path, base string) (worktree.Summary, error) {
	now := time.Now()
	if p.now != nil {
		now = p.now()
	}
	every := Heartbeat(p.Current().General.UnreachableAfter.Duration)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sums == nil {
		p.sums = map[string]summaryAt{}
	}
	key := filepath.Clean(path) + "\x00" + base
	if c, ok := p.sums[key]; ok && now.Sub(c.at) < every {
		return c.sum, c.err
	}
	for k, c := range p.sums {
		if now.Sub(c.at) >= every {
			delete(p.sums, k) // a removed worktree's, among others
		}
	}
	sum, err := p.Trees.Summary(ctx, path, base)
	p.sums[key] = summaryAt{sum: sum, err: err, at: now}
	return sum, err
}

// buttonProjects is how many projects get their own row of buttons; with
// more, a select menu holds the actions (Discord allows five rows).
const buttonProjects = 4

func icon(st string) string {
	switch st {
	case "idle":
		return "🟢 running"
	case "busy":
		return "⏳ busy"
	case "waiting on a prompt":
		return "❓ waiting on a prompt"
	}
	return "⚪ stopped"
}

func (p *Panel) id(action string, args ...string) string {
	s, _ := chat.ID{Instance: p.Instance, Kind: IDKind, Args: append([]string{action}, args...)}.Encode()
	return s
}

// Render draws the panel of one server as things stand.
func (p *Panel) Render(ctx context.Context, server string) chat.Message {
	srv, ok := p.server(server)
	if !ok {
		return chat.Message{Content: "Unknown server " + server}
	}
	regs, _ := p.Registry.Sessions.List()
	reqs, _ := p.Store.Requests.List()
	var b strings.Builder
	b.WriteString(header(p.machine(), srv.Name, false, time.Now()) + "\n")
	if line := p.Fleet.Line(srv.Name); line != "" {
		b.WriteString(line + "\n")
	}
	if pr := p.problem(); pr != "" {
		b.WriteString("⚠️ " + pr + "\n")
	}
	if c := p.connectProblem(srv.Name); c != "" {
		b.WriteString("⚠️ " + c + "\n")
	}
	if line := p.nextSchedule(srv.Name); line != "" {
		b.WriteString(line + "\n")
	}
	known := map[string]bool{}
	for _, g := range regs {
		if g.Worktree != "" {
			known[filepath.Clean(g.Worktree)] = true
		}
	}
	repos := map[string]bool{}
	for _, proj := range srv.Projects {
		key := srv.Name + "-" + proj.Name
		st, _ := p.Sessions.Status(ctx, key)
		dir, _ := proj.ProjectPath()
		fmt.Fprintf(&b, "\n%s **%s** <#%s> `%s`", icon(st.State), proj.Name, proj.ChannelID, dir)
		b.WriteString(p.figures(key)) // usage.go
		if n := pending(reqs, key); n > 0 {
			fmt.Fprintf(&b, " · %d prompt(s) waiting", n)
		}
		for _, tk := range threadKeys(regs, srv.Name, proj.Name) {
			g := regs[tk]
			tst, _ := p.Sessions.Status(ctx, tk)
			fmt.Fprintf(&b, "\n  ↳ %s <#%s>", icon(tst.State), g.ThreadID)
			if g.Worktree != "" {
				fmt.Fprintf(&b, " · `%s`", g.Branch)
				if c, err := p.summary(ctx, g.Worktree, g.BaseCommit); err == nil {
					if c.Dirty {
						b.WriteString(" · uncommitted changes")
					}
					if c.Ahead > 0 {
						fmt.Fprintf(&b, " · %d ahead", c.Ahead)
					}
				}
			}
			if n := pending(reqs, tk); n > 0 {
				fmt.Fprintf(&b, " · %d prompt(s) waiting", n)
			}
		}
		if root, err := p.Trees.Root(ctx, dir); err == nil {
			repos[root] = true
		}
	}
	b.WriteString(p.opened(ctx, srv.Name, srv.Telegram(), reqs)) // opened.go
	var orphans []string
	for _, repo := range slices.Sorted(maps.Keys(repos)) {
		trees, err := p.Trees.Orphans(ctx, repo, known)
		if err != nil {
			continue
		}
		for _, t := range trees {
			orphans = append(orphans, fmt.Sprintf("`%s` (`%s`)", t.Path, t.Branch))
		}
	}
	if len(orphans) > 0 {
		b.WriteString("\n\n**Worktrees no thread knows** (ccbridge never deletes them):\n" + strings.Join(orphans, "\n"))
	}
	content := b.String()
	if r := []rune(content); len(r) > chat.Limit {
		content = string(r[:chat.Limit-1]) + "…"
	}
	return chat.Message{Content: content, Rows: p.rows(srv)}
}

// Stopped draws the panel a daemon leaves behind when it stops: its
// projects' channels (so that the other machines know whose they are)
// and no buttons (nothing would answer them).
func (p *Panel) Stopped(server string) chat.Message {
	srv, ok := p.server(server)
	if !ok {
		return chat.Message{Content: "Unknown server " + server}
	}
	var b strings.Builder
	b.WriteString(header(p.machine(), srv.Name, true, time.Now()) + "\n")
	b.WriteString("ccbridge is not running on this machine; its sessions get no messages until it starts again.")
	for _, proj := range srv.Projects {
		fmt.Fprintf(&b, "\n**%s** <#%s>", proj.Name, proj.ChannelID)
	}
	content := b.String()
	if r := []rune(content); len(r) > chat.Limit {
		content = string(r[:chat.Limit-1]) + "…"
	}
	return chat.Message{Content: content}
}

func (p *Panel) machine() string {
	if p.Fleet != nil {
		return p.Fleet.Machine
	}
	return p.Current().General.Machine
}

func (p *Panel) rows(srv config.Server) []chat.Row {
	var rows []chat.Row
	if len(srv.Projects) <= buttonProjects {
		for _, proj := range srv.Projects {
			rows = append(rows, chat.Row{Buttons: []chat.Button{
				{Label: "▶ Start " + short(proj.Name), CustomID: p.id("start", proj.Name), Style: chat.Success},
				{Label: "■ Stop " + short(proj.Name), CustomID: p.id("stop", proj.Name), Style: chat.Danger},
			}})
		}
	} else {
		sel := &chat.Select{CustomID: p.id("choose"), Placeholder: "Start or stop a project…", MinValues: 1, MaxValues: 1}
		for _, proj := range srv.Projects {
			if len(sel.Options) >= 24 {
				break
			}
			sel.Options = append(sel.Options,
				chat.Option{Label: "▶ Start " + short(proj.Name), Value: "start." + proj.Name, Description: "start its Claude session"},
				chat.Option{Label: "■ Stop " + short(proj.Name), Value: "stop." + proj.Name, Description: "stop its Claude session"})
		}
		rows = append(rows, chat.Row{Select: sel})
	}
	last := []chat.Button{{Label: "↻ Refresh", CustomID: p.id("refresh"), Style: chat.Secondary}}
	if p.Web {
		last = append(last, chat.Button{Label: "🌐 Web view", CustomID: p.id("web"), Style: chat.Secondary})
	}
	return append(rows, chat.Row{Buttons: last})
}

func short(s string) string {
	if r := []rune(s); len(r) > 60 {
		return string(r[:60]) + "…"
	}
	return s
}

func (p *Panel) server(name string) (config.Server, bool) {
	for _, s := range p.Current().Servers {
		if s.Name == name {
			return s, true
		}
	}
	return config.Server{}, false
}

func pending(reqs map[string]state.Request, key string) int {
	n := 0
	for _, r := range reqs {
		if r.Session == key && r.Status == state.RequestPending {
			n++
		}
	}
	return n
}

func threadKeys(regs map[string]state.Registered, server, project string) []string {
	var keys []string
	for k, g := range regs {
		if g.Server == server && g.Project == project && g.ThreadID != "" && !g.Archived {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}
