//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
	"github.com/ccbridge/ccbridge/internal/testutil/fakemodel"
)

// gitRepo makes the project directory a repository with one commit.
func gitRepo(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "--allow-empty", "-m", "first"}} {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// isolatedBridge is a bridge whose project is a git repository and whose
// threads work in worktrees.
func isolatedBridge(t *testing.T) (*bridge, *project) {
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	gitRepo(t, p.dir)
	b.reconfigure(func(cfg string) string {
		line := "  path = \"" + p.dir + "\"\n"
		return strings.Replace(cfg, line, line+"    [servers.projects.thread]\n    isolation = \"worktree\"\n", 1)
	})
	return b, p
}

func waitGone(t *testing.T, what, path string) {
	t.Helper()
	deadline := time.Now().Add(long)
	for {
		if _, err := os.Stat(path); os.IsNotExist(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s %s is still there", what, path)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitNoBranches waits for the ccbridge branches of repo to be deleted: git
// deletes a branch only after its worktree is gone, so the branch outlives
// the folder by one git call.
func waitNoBranches(t *testing.T, repo string) {
	t.Helper()
	deadline := time.Now().Add(long)
	for {
		br := branches(t, repo)
		if br == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("branches left: %s", br)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func branches(t *testing.T, repo string) string {
	out, _ := exec.Command("git", "-C", repo, "branch", "--list", "ccbridge/*").Output()
	return strings.TrimSpace(string(out))
}

// 3. A file Claude writes lands in the thread's worktree, not in the
// project checkout. 4. Archived with that uncommitted change, the worktree is
// kept, the diff stat and buttons are posted, and Delete anyway (confirmed)
// removes it.
func TestWorktreeIsolationAndKeptOnArchive(t *testing.T) {
	t.Parallel()
	b, p := isolatedBridge(t)
	th := threadOf(p, b.srv.StartThread(p.channel, "Isolated work", b.owner))
	b.model.Script("SCN_WT", fakemodel.Tool("", "Bash", map[string]any{"command": "touch wt.txt && pwd", "description": "Write in the worktree"}))
	b.say(th, "SCN_WT")
	card := b.waitCard(th, "the card", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "touch wt.txt") })
	b.srv.Click(card.ID, action(t, card, "allow"), b.owner)
	reply := b.waitReply(th, "Done. Last tool result: ")
	wt := strings.TrimSpace(strings.TrimPrefix(body(reply.Content), "Done. Last tool result: "))
	if !strings.HasPrefix(wt, filepath.Join(p.dir, ".claude", "worktrees")+"/") {
		t.Fatalf("Claude ran in %q, not in a worktree of %s", wt, p.dir)
	}
	if _, err := os.Stat(filepath.Join(wt, "wt.txt")); err != nil {
		t.Fatalf("the file is not in the worktree: %v", err)
	}
	if _, err := os.Stat(filepath.Join(p.dir, "wt.txt")); err == nil {
		t.Fatal("the file landed in the project checkout")
	}

	b.srv.ArchiveThread(th.channel, false)
	kept := b.srv.WaitMessage(long, "the kept-worktree notice", func(m *fakediscord.Message) bool {
		return m.ChannelID == p.channel && strings.Contains(m.Content, "worktree of <#"+th.channel+"> was kept")
	})
	if !strings.Contains(kept.Content, "wt.txt") || !strings.Contains(kept.Content, "uncommitted changes") {
		t.Fatalf("notice = %q", kept.Content)
	}
	if _, err := os.Stat(wt); err != nil {
		t.Fatal("a worktree with uncommitted work was removed")
	}
	var del string
	for _, id := range kept.CustomIDs() {
		if strings.Contains(id, "|delete|") {
			del = id
		}
	}
	b.srv.Click(kept.ID, del, b.owner)
	confirm := b.srv.WaitMessage(10*time.Second, "the confirmation", func(m *fakediscord.Message) bool {
		return m.ID == kept.ID && strings.Contains(m.Content, "cannot be undone")
	})
	if _, err := os.Stat(wt); err != nil {
		t.Fatal("Delete anyway removed the worktree before it was confirmed")
	}
	var yes string
	for _, id := range confirm.CustomIDs() {
		if strings.Contains(id, "|confirm|") {
			yes = id
		}
	}
	b.srv.Click(kept.ID, yes, b.owner)
	b.srv.WaitMessage(long, "the deletion", func(m *fakediscord.Message) bool {
		return m.ID == kept.ID && strings.Contains(m.Content, "Deleted the worktree")
	})
	waitGone(t, "worktree", wt)
	if br := branches(t, p.dir); br != "" {
		t.Fatalf("branches left: %s", br)
	}
}

// 4. Archived with a clean worktree: pane gone, worktree and branch removed.
func TestWorktreeCleanRemovedOnArchive(t *testing.T) {
	t.Parallel()
	b, p := isolatedBridge(t)
	th := threadOf(p, b.srv.StartThread(p.channel, "Clean", b.owner))
	b.say(th, "hello")
	b.waitReply(th, "ok: hello")
	reg, _ := registry(t, b).Sessions.Get(th.key)
	if reg.Worktree == "" || reg.Branch == "" || reg.BaseCommit == "" {
		t.Fatalf("registry = %+v", reg)
	}
	b.srv.ArchiveThread(th.channel, false)
	waitGone(t, "worktree", reg.Worktree)
	waitNoBranches(t, p.dir)
	if n := len(b.panes()); n != 0 {
		t.Fatalf("%d panes left", n)
	}
}

// 7. A worktree removed with `git worktree remove` from a shell is
// reported in its thread.
func TestWorktreeRemovedOutside(t *testing.T) {
	t.Parallel()
	b, p := isolatedBridge(t)
	th := threadOf(p, b.srv.StartThread(p.channel, "Outside", b.owner))
	b.say(th, "hello")
	b.waitReply(th, "ok: hello")
	reg, _ := registry(t, b).Sessions.Get(th.key)
	if out, err := exec.Command("git", "-C", p.dir, "worktree", "remove", "--force", reg.Worktree).CombinedOutput(); err != nil {
		t.Fatalf("git worktree remove: %v\n%s", err, out)
	}
	b.waitReply(th, "was removed outside ccbridge")
	deadline := time.Now().Add(long)
	for len(b.panes()) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the session of the removed worktree still runs")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
