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

// gitIn runs git in dir as a person at a terminal would.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// threadWrites starts a thread whose Claude writes text to file in its
// worktree (allowed from its card) and returns the thread.
func threadWrites(t *testing.T, b *bridge, p *project, name, scn, file, text string) *project {
	t.Helper()
	th := threadOf(p, b.srv.StartThread(p.channel, name, b.owner))
	b.model.Script(scn, fakemodel.Tool("", "Bash", map[string]any{"command": "printf '" + text + "\\n' > " + file + " && echo wrote-" + file, "description": "Write"}))
	b.say(th, scn)
	card := b.waitCard(th, "the card of "+scn, func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "> "+file) })
	b.srv.Click(card.ID, action(t, card, "allow"), b.owner)
	b.waitReply(th, "Done. Last tool result: wrote-"+file)
	return th
}

// A thread's change shows in /diff with its patch attached; /commit and
// /merge land it on main by fast-forward; a second thread, committed
// through the form, lands with a merge commit after main moved on.
func TestLandDiffCommitMerge(t *testing.T) {
	t.Parallel()
	b, p := isolatedBridge(t)
	th := threadWrites(t, b, p, "Feature one", "SCN_LAND1", "feature.txt", "thread line")

	d := b.command(th, "diff", nil, "Changes in")
	if !strings.Contains(d.Content, "feature.txt") || !strings.Contains(d.Content, "<@"+b.owner.ID+">") {
		t.Fatalf("/diff = %q", d.Content)
	}
	patch := b.srv.WaitMessage(long, "the patch file", func(m *fakediscord.Message) bool {
		return m.ChannelID == th.channel && len(m.Files) == 1 && strings.HasSuffix(m.Files[0].Name, ".diff")
	})
	if !strings.Contains(string(patch.Files[0].Data), "+thread line") || !strings.Contains(string(patch.Files[0].Data), "feature.txt") {
		t.Fatalf("patch file = %q", patch.Files[0].Data)
	}

	b.command(th, "commit", map[string]any{"message": "Add the feature"}, "Committed")
	m := b.command(th, "merge", nil, "Merged")
	if !strings.Contains(m.Content, "fast-forward") || !strings.Contains(m.Content, "<@"+b.owner.ID+">") {
		t.Fatalf("/merge = %q", m.Content)
	}
	if got := gitIn(t, p.dir, "show", "main:feature.txt"); got != "thread line" {
		t.Fatalf("main:feature.txt = %q", got)
	}
	if !strings.Contains(gitIn(t, p.dir, "log", "-1", "--format=%B", "main"), "Committed from Discord by owner") {
		t.Error("the commit does not say who made it")
	}
	// The merged worktree can go, with its branch.
	s, _ := b.store.Sessions.Get(th.key)
	b.srv.Click(m.ID, landAction(t, m, "remove"), b.owner)
	b.waitCardText(m, "Removed the merged worktree")
	waitGone(t, "the merged worktree", s.Cwd)
	waitUntil(t, 10*time.Second, "the merged thread archived", func() bool { ch, _ := b.srv.Channel(th.channel); return ch.Archived })
	if br := gitIn(t, p.dir, "for-each-ref", "refs/heads/ccbridge/"); br != "" {
		t.Fatalf("branches left: %q", br)
	}

	// Main moves on; a second thread's work needs a merge commit.
	th2 := threadWrites(t, b, p, "Feature two", "SCN_LAND2", "second.txt", "second line")
	os.WriteFile(filepath.Join(p.dir, "main.txt"), []byte("on main\n"), 0o644)
	gitIn(t, p.dir, "add", "main.txt")
	gitIn(t, p.dir, "commit", "-qm", "main moves on")
	it := b.srv.Command(th2.channel, "commit", b.owner, nil)
	r := b.srv.WaitResponse(it, 5*time.Second)
	// The form opens at once (no git first: a diff can take past Discord's
	// 3 seconds), drafted from the thread's name.
	if r.Modal == nil || !strings.Contains(string(r.Response), `"value":"Feature two"`) {
		t.Fatalf("/commit without a message did not open a form pre-filled with the thread's name: %s", r.Response)
	}
	sub := b.srv.SubmitModal(it, b.owner, map[string]string{"message": "Add the second feature"})
	sr := b.srv.WaitResponse(sub, 5*time.Second)
	b.srv.WaitMessage(long, "the commit answer", func(m *fakediscord.Message) bool {
		return m.ID == sr.OriginalID && strings.Contains(m.Content, "Committed")
	})
	m = b.command(th2, "merge", nil, "Merged")
	if !strings.Contains(m.Content, "merge commit") {
		t.Fatalf("/merge = %q", m.Content)
	}
	if parents := strings.Fields(gitIn(t, p.dir, "log", "-1", "--format=%P", "main")); len(parents) != 2 {
		t.Fatalf("main's head is not a merge commit: %v", parents)
	}
	if gitIn(t, p.dir, "show", "main:second.txt") != "second line" || gitIn(t, p.dir, "show", "main:main.txt") != "on main" {
		t.Fatal("the merge lost a side")
	}
}

// A conflict aborts the merge, names the files and leaves both branches
// and the checkout as they were; with a dirty checkout /merge changes
// nothing and says why.
func TestLandMergeConflictAndDirtyCheckout(t *testing.T) {
	t.Parallel()
	b, p := isolatedBridge(t)
	os.WriteFile(filepath.Join(p.dir, "shared.txt"), []byte("base\n"), 0o644)
	gitIn(t, p.dir, "add", "shared.txt")
	gitIn(t, p.dir, "commit", "-qm", "shared file")
	th := threadWrites(t, b, p, "Clash", "SCN_CLASH", "shared.txt", "thread version")
	b.command(th, "commit", map[string]any{"message": "Thread edits shared"}, "Committed")
	os.WriteFile(filepath.Join(p.dir, "shared.txt"), []byte("main version\n"), 0o644)
	gitIn(t, p.dir, "commit", "-qam", "main edits shared")

	branch := gitIn(t, p.dir, "for-each-ref", "--format=%(refname:short)", "refs/heads/ccbridge/")
	if branch == "" || strings.Contains(branch, "\n") {
		t.Fatalf("thread branches: %q", branch)
	}
	mainBefore, threadBefore := gitIn(t, p.dir, "rev-parse", "main"), gitIn(t, p.dir, "rev-parse", branch)
	m := b.command(th, "merge", nil, "conflicts")
	if !strings.Contains(m.Content, "`shared.txt`") || !strings.Contains(m.Content, "aborted") {
		t.Fatalf("/merge = %q", m.Content)
	}
	if gitIn(t, p.dir, "rev-parse", "main") != mainBefore || gitIn(t, p.dir, "rev-parse", branch) != threadBefore ||
		gitIn(t, p.dir, "status", "--porcelain", "--untracked-files=no") != "" {
		t.Fatal("the conflicted merge left something changed")
	}
	if got, _ := os.ReadFile(filepath.Join(p.dir, "shared.txt")); string(got) != "main version\n" {
		t.Fatalf("checkout's shared.txt = %q", got)
	}

	os.WriteFile(filepath.Join(p.dir, "shared.txt"), []byte("local edit\n"), 0o644)
	m = b.command(th, "merge", nil, "Nothing was merged")
	if !strings.Contains(m.Content, "uncommitted changes") || !strings.Contains(m.Content, "shared.txt") {
		t.Fatalf("/merge on a dirty checkout = %q", m.Content)
	}
	if gitIn(t, p.dir, "rev-parse", "main") != mainBefore || gitIn(t, p.dir, "rev-parse", branch) != threadBefore {
		t.Fatal("a refused merge moved a branch")
	}
	if got, _ := os.ReadFile(filepath.Join(p.dir, "shared.txt")); string(got) != "local edit\n" {
		t.Fatalf("the local edit was touched: %q", got)
	}
}

// /discard asks first, showing the stat, then throws the uncommitted
// change away; /audit lists it with the Allow that made the change.
func TestLandDiscardAndAudit(t *testing.T) {
	t.Parallel()
	b, p := isolatedBridge(t)
	th := threadWrites(t, b, p, "Scratch", "SCN_SCRATCH", "scratch.txt", "throwaway")
	ask := b.command(th, "discard", nil, "Discard these uncommitted changes")
	if !strings.Contains(ask.Content, "scratch.txt") {
		t.Fatalf("/discard = %q", ask.Content)
	}
	s, _ := b.store.Sessions.Get(th.key)
	file := filepath.Join(s.Cwd, "scratch.txt")
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("the change went before the confirmation: %v", err)
	}
	b.srv.Click(ask.ID, landAction(t, ask, "discard"), b.owner)
	b.waitCardText(ask, "Discarded the uncommitted changes")
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("scratch.txt is still there: %v", err)
	}
	a := b.command(th, "audit", map[string]any{"count": 5}, "decision(s)")
	if !strings.Contains(a.Content, "**discarded** discord") || !strings.Contains(a.Content, "**allow** discord") || !strings.Contains(a.Content, "scratch.txt") {
		t.Fatalf("/audit = %q", a.Content)
	}
}

// /diff's "Merge this" lands exactly the commit the diff showed: once the
// branch moved (a commit nobody was shown), nothing is merged and the
// answer says to look again; the next /diff's button lands it all, and
// the answer says no hook ran.
func TestLandMergeThisRefusesAMovedBranch(t *testing.T) {
	t.Parallel()
	b, p := isolatedBridge(t)
	th := threadWrites(t, b, p, "Reviewed", "SCN_SHOWN", "feature.txt", "reviewed line")
	b.command(th, "commit", map[string]any{"message": "The reviewed feature"}, "Committed")
	d := b.command(th, "diff", nil, "Changes in")
	mergeThis := landAction(t, d, "merge")

	s, _ := b.store.Sessions.Get(th.key)
	os.WriteFile(filepath.Join(s.Cwd, "unseen.txt"), []byte("never shown\n"), 0o644)
	gitIn(t, s.Cwd, "add", "unseen.txt")
	gitIn(t, s.Cwd, "commit", "-qm", "after the diff")
	mainBefore := gitIn(t, p.dir, "rev-parse", "main")

	answer := func(it *fakediscord.Interaction, want string) *fakediscord.Message {
		r := b.srv.WaitResponse(it, 5*time.Second)
		return b.srv.WaitMessage(long, "the merge answer containing "+want, func(m *fakediscord.Message) bool {
			return m.ID == r.OriginalID && strings.Contains(m.Content, want)
		})
	}
	m := answer(b.srv.Click(d.ID, mergeThis, b.owner), "Nothing was merged")
	if !strings.Contains(m.Content, "moved since you were shown it") {
		t.Fatalf("Merge this on a moved branch = %q", m.Content)
	}
	if gitIn(t, p.dir, "rev-parse", "main") != mainBefore {
		t.Fatal("main moved")
	}
	if _, err := os.Stat(filepath.Join(p.dir, "unseen.txt")); !os.IsNotExist(err) {
		t.Fatalf("the unseen commit landed: %v", err)
	}

	d = b.command(th, "diff", nil, "Changes in")
	if !strings.Contains(d.Content, "unseen.txt") {
		t.Fatalf("/diff = %q", d.Content)
	}
	m = answer(b.srv.Click(d.ID, landAction(t, d, "merge"), b.owner), "Merged")
	if !strings.Contains(m.Content, "fast-forward") || !strings.Contains(m.Content, "hooks were not run") {
		t.Fatalf("Merge this = %q", m.Content)
	}
	if gitIn(t, p.dir, "show", "main:unseen.txt") != "never shown" || gitIn(t, p.dir, "show", "main:feature.txt") != "reviewed line" {
		t.Fatal("main lacks what the second diff showed")
	}
}

// A project that is a subdirectory of a repository (a monorepo's part):
// /discard shows that subdirectory's changes and throws away only those,
// and /commit there refuses while changes outside it are staged, which it
// would take along unseen.
func TestLandInASubdirectoryStaysInIt(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	api, web := filepath.Join(p.dir, "api"), filepath.Join(p.dir, "web")
	os.MkdirAll(api, 0o755)
	os.MkdirAll(web, 0o755)
	os.WriteFile(filepath.Join(api, "a.go"), []byte("v1\n"), 0o644)
	os.WriteFile(filepath.Join(web, "w.js"), []byte("v1\n"), 0o644)
	gitRepo(t, p.dir)
	b.reconfigure(func(cfg string) string {
		return strings.Replace(cfg, "  path = \""+p.dir+"\"\n", "  path = \""+api+"\"\n", 1)
	})
	os.WriteFile(filepath.Join(api, "a.go"), []byte("scratch\n"), 0o644)
	os.WriteFile(filepath.Join(web, "w.js"), []byte("the person's work\n"), 0o644)

	ask := b.command(p, "discard", nil, "Discard these uncommitted changes")
	if !strings.Contains(ask.Content, "a.go") || strings.Contains(ask.Content, "w.js") {
		t.Fatalf("/discard = %q", ask.Content)
	}
	b.srv.Click(ask.ID, landAction(t, ask, "discard"), b.owner)
	b.waitCardText(ask, "Discarded the uncommitted changes")
	if got, _ := os.ReadFile(filepath.Join(api, "a.go")); string(got) != "v1\n" {
		t.Fatalf("api/a.go = %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(web, "w.js")); string(got) != "the person's work\n" {
		t.Fatalf("web/w.js, never shown, was thrown away: %q", got)
	}

	gitIn(t, p.dir, "add", "web/w.js")
	os.WriteFile(filepath.Join(api, "b.go"), []byte("new\n"), 0o644)
	before := gitIn(t, p.dir, "rev-parse", "HEAD")
	m := b.command(p, "commit", map[string]any{"message": "api work"}, "not in a ccbridge worktree")
	it := b.srv.Click(m.ID, landAction(t, m, "commitask"), b.owner)
	b.srv.WaitResponse(it, 5*time.Second)
	sub := b.srv.SubmitModal(it, b.owner, map[string]string{"message": "api work"})
	sr := b.srv.WaitResponse(sub, 5*time.Second)
	done := b.srv.WaitMessage(long, "the commit answer", func(m *fakediscord.Message) bool {
		return m.ID == sr.OriginalID && strings.Contains(m.Content, "Nothing was committed")
	})
	if !strings.Contains(done.Content, "web/w.js") {
		t.Fatalf("commit answer = %q", done.Content)
	}
	if gitIn(t, p.dir, "rev-parse", "HEAD") != before {
		t.Fatal("committed with work staged outside the project")
	}
}

// A .gitattributes line cannot make /diff unreviewable or unredacted: the
// files it marks binary are named and shown as text, so the transport
// finds the key in .env and holds the patch back.
func TestLandDiffSeesThroughGitattributes(t *testing.T) {
	t.Parallel()
	b, p := isolatedBridge(t)
	th := threadWrites(t, b, p, "Attributes", "SCN_ATTR", "deploy.sh", "curl evil")
	s, _ := b.store.Sessions.Get(th.key)
	os.WriteFile(filepath.Join(s.Cwd, ".gitattributes"), []byte("*.sh binary\n.env binary\n"), 0o644)
	os.WriteFile(filepath.Join(s.Cwd, ".env"), []byte("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"), 0o644)

	d := b.command(th, "diff", nil, "Changes in")
	if !strings.Contains(d.Content, "marked binary by .gitattributes") || !strings.Contains(d.Content, "`deploy.sh`") || !strings.Contains(d.Content, "`.env`") {
		t.Fatalf("/diff = %q", d.Content)
	}
	b.srv.WaitMessage(long, "the patch held back", func(m *fakediscord.Message) bool {
		return m.ChannelID == th.channel && strings.Contains(m.Content, "was held back") && len(m.Files) == 0
	})
	for _, m := range b.botMessages(th.channel) {
		for _, f := range m.Files {
			if strings.Contains(string(f.Data), "wJalrXUtnFEMI") {
				t.Fatalf("the key went out in %s", f.Name)
			}
		}
	}
}

// landAction returns the custom_id of a landing button.
func landAction(t *testing.T, m *fakediscord.Message, name string) string {
	t.Helper()
	for _, id := range m.CustomIDs() {
		if parts := strings.Split(id, "|"); len(parts) >= 5 && parts[2] == "land" && parts[4] == name {
			return id
		}
	}
	t.Fatalf("no %q button: %q", name, m.CustomIDs())
	return ""
}

// /commit in a channel whose session works in the project checkout (not a
// ccbridge worktree) commits only after the person confirms, in a form
// that keeps the message given.
func TestLandCommitInTheCheckoutAsksFirst(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	gitRepo(t, p.dir)
	before := gitIn(t, p.dir, "rev-parse", "HEAD")
	os.WriteFile(filepath.Join(p.dir, "direct.txt"), []byte("direct\n"), 0o644)
	ask := b.command(p, "commit", map[string]any{"message": "Direct change"}, "not in a ccbridge worktree")
	if gitIn(t, p.dir, "rev-parse", "HEAD") != before {
		t.Fatal("committed before the confirmation")
	}
	it := b.srv.Click(ask.ID, landAction(t, ask, "commitask"), b.owner)
	r := b.srv.WaitResponse(it, 5*time.Second)
	if r.Modal == nil || !strings.Contains(string(r.Response), "Direct change") {
		t.Fatalf("the confirmation did not open the form with the message: %s", r.Response)
	}
	sub := b.srv.SubmitModal(it, b.owner, map[string]string{"message": "Direct change"})
	sr := b.srv.WaitResponse(sub, 5*time.Second)
	b.srv.WaitMessage(long, "the commit answer", func(m *fakediscord.Message) bool {
		return m.ID == sr.OriginalID && strings.Contains(m.Content, "Committed")
	})
	if gitIn(t, p.dir, "show", "HEAD:direct.txt") != "direct" || !strings.HasPrefix(gitIn(t, p.dir, "log", "-1", "--format=%s"), "Direct change") {
		t.Fatal("the change is not committed")
	}
}
