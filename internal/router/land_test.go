package router

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/audit"
	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/worktree"
)

type fakeLander struct {
	calls     []string
	conflicts []string
	patch     string        // what Diff shows; "+x" when empty
	ignored   []string      // what Inspect finds git ignoring
	slow      time.Duration // how long Diff takes (a large tree, a cold cache)
	clean     bool          // CommitAll finds nothing to commit
	fail      error         // what git fails with
	stat      string        // what Diff's stat shows (one file when empty)
	head      string        // the branch's head now ("c0ffee" when empty)
	dirty     bool          // Diff finds uncommitted changes
	marked    []string      // files Diff shows as text that attributes made binary
	binary    string        // the text of the files Diff carries as binary
	merged    []worktree.MergeSpec
	budget    time.Duration // how long the last call had before its deadline
}

func (f *fakeLander) headNow() string {
	if f.head == "" {
		return "c0ffee"
	}
	return f.head
}

func (f *fakeLander) Diff(ctx context.Context, dir, base string) (worktree.Diff, error) {
	f.calls = append(f.calls, "diff "+base)
	if d, ok := ctx.Deadline(); ok {
		f.budget = time.Until(d)
	}
	time.Sleep(f.slow)
	if f.fail != nil {
		return worktree.Diff{}, f.fail
	}
	patch := f.patch
	if patch == "" {
		patch = "+x"
	}
	stat := f.stat
	if stat == "" {
		stat = " a.go | 1 +\n 1 file changed"
	}
	return worktree.Diff{Stat: stat, Patch: patch, Files: 1, Head: f.headNow(), Uncommitted: f.dirty, Marked: f.marked, Binary: f.binary}, nil
}
func (f *fakeLander) CommitAll(_ context.Context, dir, msg string) (string, error) {
	f.calls = append(f.calls, "commit")
	if f.fail != nil {
		return "", f.fail
	}
	if f.clean {
		return "", worktree.ErrNothingToCommit
	}
	return "abcdef0123456", nil
}
func (f *fakeLander) Merge(_ context.Context, m worktree.MergeSpec) (worktree.MergeResult, error) {
	f.calls = append(f.calls, "merge")
	f.merged = append(f.merged, m)
	if f.fail != nil {
		return worktree.MergeResult{}, f.fail
	}
	if m.Commit != "" && !strings.HasPrefix(f.headNow(), m.Commit) {
		return worktree.MergeResult{}, &worktree.NotReadyError{Reason: "the thread's branch moved since you were shown it"}
	}
	if f.conflicts != nil {
		return worktree.MergeResult{Conflicts: f.conflicts}, nil
	}
	return worktree.MergeResult{FastForward: true, Commit: "abc"}, nil
}
func (f *fakeLander) Discard(context.Context, string) error {
	f.calls = append(f.calls, "discard")
	if f.fail != nil {
		return f.fail
	}
	return nil
}
func (f *fakeLander) CurrentBranch(context.Context, string) string          { return "main" }
func (f *fakeLander) Contains(context.Context, string, string, string) bool { return true }
func (f *fakeLander) Inspect(context.Context, string, string) (worktree.Changes, error) {
	f.calls = append(f.calls, "inspect")
	if f.fail != nil {
		return worktree.Changes{}, f.fail
	}
	return worktree.Changes{Ignored: f.ignored, Ahead: 1}, nil
}

// Mid-turn, no landing command touches git: each says Claude is busy.
func TestLandingWaitsForTheTurn(t *testing.T) {
	r, _, _, l, store := newRouter(t)
	fl := &fakeLander{}
	r.opt.Land = fl
	threadID := "100000000000000055"
	key := "home-api-t" + threadID
	tg, ok := r.resolve("home", threadID, channel)
	if !ok || tg.key != key {
		t.Fatalf("thread key %q, want %q", tg.key, key)
	}
	if _, err := r.opt.Registry.Sessions.Update(context.Background(), key, func(g *state.Registered) error {
		g.Worktree, g.Repo, g.Branch, g.BaseCommit = t.TempDir(), t.TempDir(), "ccbridge/x", "base0"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Sessions.Update(context.Background(), key, func(s *state.Session) error { s.Busy = true; return nil }); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"diff", "commit", "merge", "discard"} {
		r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: threadID, ParentID: channel, User: chat.User{ID: owner}, Name: name}, fakeResponder{l: l})
	}
	id := r.landID(key, "discard", chat.ShortHash("+x"))
	r.HandleComponent(l.onDrawn(r, chat.ComponentEvent{Server: "home", ChannelID: threadID, User: chat.User{ID: owner}, CustomID: id}), fakeResponder{l: l})
	if len(fl.calls) != 0 {
		t.Fatalf("git ran mid-turn: %v", fl.calls)
	}
	if n := strings.Count(strings.Join(l.all(), "\n"), "mid-turn"); n != 5 {
		t.Fatalf("%d busy answers of 5: %q", n, l.all())
	}

	// Once the turn ends, they run, and say who.
	store.Sessions.Update(context.Background(), key, func(s *state.Session) error { s.Busy = false; return nil })
	r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: threadID, ParentID: channel, User: chat.User{ID: owner, Name: "o"}, Name: "merge"}, fakeResponder{l: l})
	if !strings.Contains(strings.Join(l.all(), "\n"), "Merged `ccbridge/x` into `main` (fast-forward, now at `abc`) by <@"+owner+">") {
		t.Fatalf("merge answer: %q", l.all())
	}
}

// The /discard confirmation may be clicked hours later: it discards
// nothing once the changes differ from those shown (they are asked about
// anew), and a question without the hash (an older ccbridge's) discards
// nothing either.
func TestDiscardIsBoundToTheChangesShown(t *testing.T) {
	r, _, _, l, _ := newRouter(t)
	fl := &fakeLander{patch: "+one line"}
	r.opt.Land = fl
	var asked chat.Reply
	r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, Name: "discard"}, drawn{fakeResponder{l: l}, &asked})
	discard := buttonID(t, asked, "Discard them")

	fl.patch = "+one line\n+and the work of the afternoon"
	var again chat.Reply
	r.HandleComponent(l.onDrawn(r, chat.ComponentEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, CustomID: discard}), drawn{fakeResponder{l: l}, &again})
	if slices.Contains(fl.calls, "discard") {
		t.Fatalf("changes made after the question were discarded: %q", fl.calls)
	}
	if !strings.Contains(again.Content, "changed since you were asked") {
		t.Fatalf("answer = %q", again.Content)
	}

	old, _ := chat.ID{Instance: "inst1", Kind: landKind, Args: []string{"home-api", "discard"}}.Encode()
	n := len(l.all())
	r.HandleComponent(l.onDrawn(r, chat.ComponentEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, CustomID: old}), fakeResponder{l: l})
	if got := l.all()[n:]; slices.Contains(fl.calls, "discard") || len(got) != 1 || !strings.Contains(got[0], "older ccbridge") {
		t.Fatalf("an old question did %q, git %q", got, fl.calls)
	}

	// The new question discards what it shows.
	r.HandleComponent(l.onDrawn(r, chat.ComponentEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, CustomID: buttonID(t, again, "Discard them")}), fakeResponder{l: l})
	if !slices.Contains(fl.calls, "discard") {
		t.Fatalf("the confirmed changes were not discarded: %q, %q", fl.calls, l.all())
	}
}

// Names long enough that the session key reaches the custom_id hashed
// still find their session: the buttons and the form work.
func TestLandButtonsWithLongNames(t *testing.T) {
	server, project := "company-server-"+strings.Repeat("s", 40), "backend-service-"+strings.Repeat("p", 40)
	r, _, _, l, _ := newRouterNamed(t, server, project)
	fl := &fakeLander{}
	r.opt.Land = fl
	var asked chat.Reply
	r.HandleCommand(chat.CommandEvent{Server: server, ChannelID: channel, User: chat.User{ID: owner}, Name: "discard"}, drawn{fakeResponder{l: l}, &asked})
	var answer chat.Reply
	r.HandleComponent(l.onDrawn(r, chat.ComponentEvent{Server: server, ChannelID: channel, User: chat.User{ID: owner}, CustomID: buttonID(t, asked, "Discard them")}), drawn{fakeResponder{l: l}, &answer})
	if !slices.Contains(fl.calls, "discard") {
		t.Fatalf("the confirmed discard did nothing: %q; answer %q", fl.calls, answer.Content)
	}
}

// /audit answers in public, in one project's channel, from the log every
// server and project of the machine shares: it lists only that project's
// decisions, those of its threads included.
func TestAuditShowsOnlyThisProject(t *testing.T) {
	r, _, _, l, _ := newRouter(t)
	root := r.opt.Registry.Dir.Root()
	key := registerThread(t, r)
	for _, e := range []audit.Entry{
		{Kind: "permission", Server: "work", Project: "api", Session: "work-api", Asked: "Bash: cat other-server-secret", Answer: "allow", From: audit.FromDiscord},
		{Kind: "permission", Server: "home", Project: "web", Session: "home-web", Asked: "Bash: cat other-channel-secret", Answer: "allow", From: audit.FromDiscord},
		{Kind: "permission", Server: "work", Session: key, Asked: "Bash: cat mislabelled", Answer: "allow", From: audit.FromDiscord},
		{Kind: "permission", Session: "home-api", Asked: "Bash: cat unplaced", Answer: "allow", From: audit.FromDiscord},
		{Kind: "commit", Server: "home", Project: "api", Session: "home-api", Asked: "commit in /src/api", Answer: "committed", From: audit.FromDiscord},
		{Kind: "permission", Server: "home", Session: key, Asked: "Bash: ls in a thread", Answer: "allow", From: audit.FromDiscord},
	} {
		if err := audit.Append(root, e); err != nil {
			t.Fatal(err)
		}
	}
	var reply chat.Reply
	r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, Name: "audit"}, drawn{fakeResponder{l: l}, &reply})
	if strings.Contains(reply.Content, "secret") || strings.Contains(reply.Content, "mislabelled") || strings.Contains(reply.Content, "unplaced") {
		t.Fatalf("/audit shows another server's or project's decisions: %q", reply.Content)
	}
	if !strings.Contains(reply.Content, "commit in /src/api") || !strings.Contains(reply.Content, "ls in a thread") || !strings.Contains(reply.Content, "last 2 decision(s)") {
		t.Fatalf("/audit = %q", reply.Content)
	}

	// The count is of this project's decisions, not of the whole log.
	r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, Name: "audit", Options: map[string]string{"count": "1"}}, drawn{fakeResponder{l: l}, &reply})
	if !strings.Contains(reply.Content, "ls in a thread") || strings.Contains(reply.Content, "commit in") {
		t.Fatalf("/audit count 1 = %q", reply.Content)
	}
}

// What is done from Discord is recorded under its project even before
// the session ever ran (no runtime record to read it from).
func TestLandingDecisionsNameTheirProject(t *testing.T) {
	r, _, _, l, _ := newRouter(t)
	r.opt.Land = &fakeLander{}
	var asked chat.Reply
	r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, Name: "discard"}, drawn{fakeResponder{l: l}, &asked})
	r.HandleComponent(l.onDrawn(r, chat.ComponentEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, CustomID: buttonID(t, asked, "Discard them")}), fakeResponder{l: l})
	es, err := audit.Last(r.opt.Registry.Dir.Root(), 10)
	if err != nil || len(es) != 1 || es[0].Server != "home" || es[0].Project != "api" || es[0].Kind != "discard" {
		t.Fatalf("entries %+v, %v", es, err)
	}
}

// "Remove the worktree" after /merge removes it by force (a merged branch
// is ahead of its base): a file git ignores, which the diff does not show,
// keeps the worktree, and the answer names it.
func TestRemoveAfterMergeKeepsIgnoredFiles(t *testing.T) {
	r, _, _, l, _ := newRouter(t)
	fl := &fakeLander{patch: " "} // a clean worktree
	r.opt.Land = fl
	key := registerThread(t, r)
	dir := t.TempDir()
	if _, err := r.opt.Registry.Sessions.Update(context.Background(), key, func(g *state.Registered) error {
		g.Worktree, g.Repo, g.Branch, g.BaseCommit = dir, t.TempDir(), "ccbridge/x", "base0"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	fl.ignored = []string{".env"}
	n := len(l.all())
	click(r, l, thread, r.landID(key, "remove"))
	got := l.all()[n:]
	if slices.ContainsFunc(got, func(op string) bool { return strings.HasPrefix(op, "stop") || strings.HasPrefix(op, "release") }) {
		t.Fatalf("a worktree holding .env was removed: %q", got)
	}
	if last := got[len(got)-1]; !strings.Contains(last, "Kept the worktree `"+dir+"`") || !strings.Contains(last, "`.env`") || !strings.HasSuffix(last, "buttons=1") {
		t.Fatalf("answer = %q", last)
	}

	fl.ignored = nil
	click(r, l, thread, r.landID(key, "remove"))
	l.waitFor(t, "release "+key+" force=true")
}

// modalAt records the form an interaction opened, and when.
type modalAt struct {
	fakeResponder
	modal *chat.Modal
	at    *time.Time
}

func (m modalAt) OpenModal(md chat.Modal) error {
	*m.modal, *m.at = md, time.Now()
	return m.fakeResponder.OpenModal(md)
}

// /commit without a message, and "Commit in the checkout anyway…", open
// their form at once: a form cannot follow a deferral, and Discord drops
// an interaction not answered within 3 seconds. No git runs first, however
// long it would take; a clean tree is told so once the form is submitted.
func TestCommitFormOpensWithinDiscordsWindow(t *testing.T) {
	r, _, _, l, _ := newRouter(t)
	fl := &fakeLander{slow: 3500 * time.Millisecond, clean: true}
	r.opt.Land = fl
	key := registerThread(t, r)
	if _, err := r.opt.Registry.Sessions.Update(context.Background(), key, func(g *state.Registered) error {
		g.Worktree, g.Repo, g.Branch, g.BaseCommit = t.TempDir(), t.TempDir(), "ccbridge/x", "base0"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var modal chat.Modal
	var at time.Time
	start := time.Now()
	r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: thread, ParentID: channel, User: chat.User{ID: owner}, Name: "commit"}, modalAt{fakeResponder{l: l}, &modal, &at})
	if at.IsZero() || at.Sub(start) > time.Second {
		t.Fatalf("the form opened %v after the command (never: %v); ops %q", at.Sub(start), at.IsZero(), l.all())
	}
	if err := chat.CheckModal(modal); err != nil || modal.Inputs[0].Value != "side" {
		t.Fatalf("form %+v: %v", modal, err)
	}
	var reply chat.Reply
	r.HandleModal(l.submitDrawn(r, chat.ModalEvent{Server: "home", ChannelID: thread, User: chat.User{ID: owner}, CustomID: modal.CustomID, Values: map[string]string{"message": "side"}}), drawn{fakeResponder{l: l}, &reply})
	if !strings.Contains(reply.Content, "Nothing to commit") {
		t.Fatalf("submit of a clean tree: %q", reply.Content)
	}

	// In the project checkout, after the warning.
	at = time.Time{}
	start = time.Now()
	r.HandleComponent(l.onDrawn(r, chat.ComponentEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, CustomID: r.landID("home-api", "commitask")}), modalAt{fakeResponder{l: l}, &modal, &at})
	if at.IsZero() || at.Sub(start) > time.Second {
		t.Fatalf("the checkout's form opened %v after the click (never: %v); ops %q", at.Sub(start), at.IsZero(), l.all())
	}
	if err := chat.CheckModal(modal); err != nil || modal.Inputs[0].Value != "Update" {
		t.Fatalf("form %+v: %v", modal, err)
	}
}

// A /commit message waiting for "Commit in the checkout anyway…" belongs
// to its router: another (a daemon restarted in-process, a test running
// alongside) never drafts with it.
func TestPendingCommitMessagesStayWithTheirRouter(t *testing.T) {
	r1, _, _, l1, _ := newRouter(t)
	r2, _, _, l2, _ := newRouter(t)
	r1.opt.Land, r2.opt.Land = &fakeLander{}, &fakeLander{}
	r1.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, Name: "commit", Options: map[string]string{"message": "r1's message"}}, fakeResponder{l: l1})
	var modal chat.Modal
	var at time.Time
	ask := chat.ComponentEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, CustomID: r2.landID("home-api", "commitask")}
	r2.HandleComponent(ask, modalAt{fakeResponder{l: l2}, &modal, &at})
	if modal.Inputs[0].Value != "Update" {
		t.Fatalf("r2 drafted with %q", modal.Inputs[0].Value)
	}
	r1.HandleComponent(ask, modalAt{fakeResponder{l: l1}, &modal, &at})
	if modal.Inputs[0].Value != "r1's message" {
		t.Fatalf("r1 drafted with %q", modal.Inputs[0].Value)
	}
}

// A landing decision names the front end it was made on, the server's
// platform: Discord's as before, a Telegram server's as Telegram.
func TestLandingDecisionsNameTheirFrontEnd(t *testing.T) {
	r, _, _, l, _ := newRouter(t)
	r.opt.Land = &fakeLander{}
	discard := func() {
		var asked chat.Reply
		r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, Name: "discard"}, drawn{fakeResponder{l: l}, &asked})
		r.HandleComponent(l.onDrawn(r, chat.ComponentEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, CustomID: buttonID(t, asked, "Discard them")}), fakeResponder{l: l})
	}
	discard()
	cfg := *r.conf()
	cfg.Servers = slices.Clone(cfg.Servers)
	cfg.Servers[0].Platform = config.PlatformTelegram
	r.Reconfigure(&cfg)
	discard()
	es, err := audit.Last(r.opt.Registry.Dir.Root(), 10)
	if err != nil || len(es) != 2 || es[0].From != audit.FromDiscord || es[1].From != audit.FromTelegram {
		t.Fatalf("entries %+v, %v", es, err)
	}
}
