package session

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/worktree"
)

// prepareWorktree points the target at its thread's worktree, creating it
// (own branch, base commit recorded) the first time or after it was removed.
func (m *Manager) prepareWorktree(ctx context.Context, t *Target) error {
	if t.PolicyDir == "" {
		t.PolicyDir = t.Dir
	}
	reg, _ := m.opt.Registry.Sessions.Get(t.Key)
	if reg.Worktree != "" {
		if fi, err := os.Stat(reg.Worktree); err == nil && fi.IsDir() {
			t.Dir = reg.Worktree
			return nil
		}
	}
	repo, err := m.opt.Trees.Root(ctx, t.Dir)
	if err != nil {
		return err
	}
	base, err := m.opt.Trees.Head(ctx, repo)
	if err != nil {
		return err
	}
	branch, name := worktree.Names(t.ThreadName, t.ThreadID)
	path := worktree.Dir(repo, name)
	if err := m.opt.Trees.Add(ctx, repo, path, branch, base); err != nil {
		return err
	}
	if _, err := m.opt.Registry.Sessions.Update(ctx, t.Key, func(g *state.Registered) error {
		g.Repo, g.Worktree, g.Branch, g.BaseCommit, g.Updated = repo, path, branch, base, time.Now().UTC()
		return nil
	}); err != nil {
		return err
	}
	m.opt.Log.Info("worktree created", "session", t.Key, "path", path, "branch", branch, "base", base)
	t.Dir = path
	return nil
}

// Release is what became of a worktree when its thread closed.
type Release struct {
	Path, Branch string
	Removed      bool
	Changes      worktree.Changes // when kept: what it holds
}

// ReleaseWorktree removes a stopped session's worktree and branch when that
// loses nothing; otherwise it keeps them and says what they hold. With
// force (a person confirmed in Discord) it removes them regardless.
func (m *Manager) ReleaseWorktree(ctx context.Context, key string, force bool) (Release, error) {
	reg, err := m.opt.Registry.Sessions.Get(key)
	if err != nil || reg.Worktree == "" {
		return Release{}, nil
	}
	rel := Release{Path: reg.Worktree, Branch: reg.Branch}
	err = m.opt.Trees.Remove(ctx, reg.Repo, reg.Worktree, reg.Branch, reg.BaseCommit, force)
	if errors.Is(err, worktree.ErrDirty) || errors.Is(err, worktree.ErrAhead) {
		rel.Changes, err = m.opt.Trees.Inspect(ctx, reg.Worktree, reg.BaseCommit)
		return rel, err
	}
	if err != nil {
		return rel, err
	}
	rel.Removed = true
	m.opt.Log.Info("worktree removed", "session", key, "path", reg.Worktree, "forced", force)
	_, err = m.opt.Registry.Sessions.Update(ctx, key, func(g *state.Registered) error {
		g.Worktree, g.Branch, g.BaseCommit = "", "", ""
		return nil
	})
	return rel, err
}
