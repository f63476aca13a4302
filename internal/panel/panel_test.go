package panel

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/worktree"
)

type fakeSessions map[string]string

func (f fakeSessions) Status(_ context.Context, key string) (session.Status, error) {
	return session.Status{State: f[key]}, nil
}

type fakeTrees struct{ orphans []worktree.Tree }

func (f fakeTrees) Root(_ context.Context, dir string) (string, error) { return dir, nil }
func (f fakeTrees) Summary(context.Context, string, string) (worktree.Summary, error) {
	return worktree.Summary{Dirty: true, Ahead: 2}, nil
}
func (f fakeTrees) Orphans(_ context.Context, repo string, known map[string]bool) ([]worktree.Tree, error) {
	var out []worktree.Tree
	for _, t := range f.orphans {
		if !known[t.Path] {
			out = append(out, t)
		}
	}
	return out, nil
}

func newPanel(t *testing.T, projects int) (*Panel, *state.Registry) {
	t.Helper()
	var b strings.Builder
	b.WriteString("[[servers]]\nname = \"home\"\ntoken_env = \"X\"\nguild_id = \"100000000000000001\"\nowner_ids = [\"100000000000000002\"]\n")
	for i := range projects {
		fmt.Fprintf(&b, "[[servers.projects]]\nname = \"p%d\"\nchannel_id = \"1000000000000001%02d\"\npath = \"/src/p%d\"\n", i, i, i)
	}
	cfg, err := config.Parse(b.String())
	if err != nil {
		t.Fatal(err)
	}
	store, _ := state.OpenStore(filepath.Join(t.TempDir(), "rt"))
	reg, _ := state.OpenRegistry(filepath.Join(t.TempDir(), "durable"))
	sessions := fakeSessions{"home-p0": "idle", "home-p1": "busy", "home-p0-t555": "waiting on a prompt"}
	trees := fakeTrees{orphans: []worktree.Tree{{Path: "/src/p0/.claude/worktrees/old-1", Branch: "ccbridge/old-1"}, {Path: "/src/p0/.claude/worktrees/mine-555", Branch: "ccbridge/mine-555"}}}
	return &Panel{Config: cfg, Store: store, Registry: reg, Sessions: sessions, Trees: trees, Instance: "inst"}, reg
}

func TestPanelShowsStatesThreadsPromptsAndOrphans(t *testing.T) {
	p, reg := newPanel(t, 3)
	ctx := context.Background()
	reg.Sessions.Update(ctx, "home-p0-t555", func(g *state.Registered) error {
		g.Server, g.Project, g.ThreadID, g.Worktree, g.Branch = "home", "p0", "555", "/src/p0/.claude/worktrees/mine-555", "ccbridge/mine-555"
		return nil
	})
	p.Store.Requests.Create(ctx, "r1", state.Request{Session: "home-p1", Status: state.RequestPending})
	m := p.Render(ctx, "home")
	for _, want := range []string{"🟢 running **p0**", "↳ ❓ waiting on a prompt <#555> · `ccbridge/mine-555` · uncommitted changes · 2 ahead",
		"⏳ busy **p1** <#100000000000000101> `/src/p1` · 1 prompt(s) waiting", "⚪ stopped **p2**", "`/src/p0/.claude/worktrees/old-1` (`ccbridge/old-1`)"} {
		if !strings.Contains(m.Content, want) {
			t.Errorf("panel lacks %q:\n%s", want, m.Content)
		}
	}
	if strings.Contains(m.Content, "mine-555` (") {
		t.Error("a thread's own worktree is listed as an orphan")
	}
	if len(m.Rows) != 4 || len(m.Rows[0].Buttons) != 2 || !strings.HasSuffix(m.Rows[3].Buttons[0].CustomID, "|refresh") {
		t.Errorf("rows = %+v", m.Rows)
	}
}

func TestPanelUsesASelectBeyondFourProjects(t *testing.T) {
	p, _ := newPanel(t, 6)
	m := p.Render(context.Background(), "home")
	if len(m.Rows) != 2 || m.Rows[0].Select == nil || len(m.Rows[0].Select.Options) != 12 {
		t.Fatalf("rows = %+v", m.Rows)
	}
}

// TestPanelFitsDiscordLimits: many projects with the longest names the
// config allows, many threads and orphans; every field within Discord's
// rules (no empty option description either).
func TestPanelFitsDiscordLimits(t *testing.T) {
	for _, n := range []int{1, 4, 5, 30} {
		var b strings.Builder
		b.WriteString("[[servers]]\nname = \"home\"\ntoken_env = \"X\"\nguild_id = \"100000000000000001\"\nowner_ids = [\"100000000000000002\"]\n")
		for i := range n {
			fmt.Fprintf(&b, "[[servers.projects]]\nname = \"p%02d%s\"\nchannel_id = \"1000000000000001%02d\"\npath = \"/src/%s%d\"\n", i, strings.Repeat("x", 61), i, strings.Repeat("d", 200), i)
		}
		cfg, err := config.Parse(b.String())
		if err != nil {
			t.Fatal(err)
		}
		store, _ := state.OpenStore(filepath.Join(t.TempDir(), "rt"))
		reg, _ := state.OpenRegistry(filepath.Join(t.TempDir(), "durable"))
		var orphans []worktree.Tree
		for i := range 40 {
			orphans = append(orphans, worktree.Tree{Path: fmt.Sprintf("/src/%s/old-%d", strings.Repeat("o", 80), i), Branch: "ccbridge/old"})
		}
		p := &Panel{Config: cfg, Store: store, Registry: reg, Sessions: fakeSessions{}, Trees: fakeTrees{orphans: orphans}, Instance: "inst"}
		if err := chat.CheckMessage(p.Render(context.Background(), "home")); err != nil {
			t.Errorf("%d projects: %v", n, err)
		}
	}
}
