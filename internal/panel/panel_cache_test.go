package panel

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/worktree"
)

// countingTrees counts the git looks at each worktree.
type countingTrees struct {
	fakeTrees
	mu    sync.Mutex
	looks map[string]int
	ahead int
}

func (c *countingTrees) Summary(_ context.Context, path, _ string) (worktree.Summary, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.looks[path]++
	return worktree.Summary{Dirty: true, Ahead: c.ahead}, nil
}

// Redraws follow every change of a session: within one heartbeat, any
// number of them look at each thread's worktree once, and the next
// heartbeat looks again.
func TestPanelLooksAtEachWorktreeOncePerHeartbeat(t *testing.T) {
	p, reg := newPanel(t, 2)
	ctx := context.Background()
	trees := &countingTrees{looks: map[string]int{}, ahead: 1}
	p.Trees = trees
	now := time.Unix(1_800_000_000, 0)
	p.now = func() time.Time { return now }
	paths := map[string]string{"home-p0-t555": "/src/p0/.claude/worktrees/a-555", "home-p0-t556": "/src/p0/.claude/worktrees/b-556", "home-p1-t557": "/src/p1/.claude/worktrees/c-557"}
	for key, path := range paths {
		id := key[len(key)-3:]
		project := strings.Split(key, "-")[1]
		reg.Sessions.Update(ctx, key, func(g *state.Registered) error {
			g.Server, g.Project, g.ThreadID, g.Worktree, g.Branch, g.BaseCommit = "home", project, id, path, "ccbridge/x-"+id, "base0"
			return nil
		})
	}
	for range 25 {
		p.Render(ctx, "home")
		now = now.Add(100 * time.Millisecond)
	}
	for _, path := range paths {
		if n := trees.looks[path]; n != 1 {
			t.Fatalf("25 redraws within a heartbeat looked at %s %d times: %v", path, n, trees.looks)
		}
	}
	if m := p.Render(ctx, "home"); !strings.Contains(m.Content, "uncommitted changes · 1 ahead") {
		t.Fatalf("panel:\n%s", m.Content)
	}

	trees.ahead = 3
	now = now.Add(Heartbeat(p.Config.General.UnreachableAfter.Duration))
	m := p.Render(ctx, "home")
	for _, path := range paths {
		if n := trees.looks[path]; n != 2 {
			t.Fatalf("the next heartbeat looked at %s %d times in all: %v", path, n, trees.looks)
		}
	}
	if !strings.Contains(m.Content, "3 ahead") {
		t.Fatalf("the panel shows a stale look after the heartbeat:\n%s", m.Content)
	}
}
