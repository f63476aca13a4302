package router

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/worktree"
)

// threadWithTree registers the test thread with a worktree.
func threadWithTree(t *testing.T, r *Router) string {
	t.Helper()
	key := registerThread(t, r)
	if _, err := r.opt.Registry.Sessions.Update(context.Background(), key, func(g *state.Registered) error {
		g.Worktree, g.Repo, g.Branch, g.BaseCommit = t.TempDir(), t.TempDir(), "ccbridge/x", "base0"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return key
}

// /diff's "Merge this" lands exactly the commit the diff showed: once the
// branch moved, nothing is merged and the answer says so. A diff with
// uncommitted changes (which no merge lands) offers no such button.
func TestDiffMergesExactlyWhatItShowed(t *testing.T) {
	r, _, _, l, _ := newRouter(t)
	fl := &fakeLander{head: "c0ffee1234567"}
	r.opt.Land = fl
	threadWithTree(t, r)
	var shown chat.Reply
	r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: thread, ParentID: channel, User: chat.User{ID: owner}, Name: "diff"}, drawn{fakeResponder{l: l}, &shown})
	if !strings.Contains(shown.Content, "at `c0ffee1234`") {
		t.Fatalf("/diff does not say which commit it shows: %q", shown.Content)
	}
	mergeThis := buttonID(t, shown, "Merge this")

	fl.head = "beef000000000" // the model committed more since
	var answer chat.Reply
	r.HandleComponent(l.onDrawn(r, chat.ComponentEvent{Server: "home", ChannelID: thread, User: chat.User{ID: owner}, CustomID: mergeThis}), drawn{fakeResponder{l: l}, &answer})
	if len(fl.merged) != 1 || fl.merged[0].Commit != "c0ffee1234567" || fl.merged[0].Branch != "ccbridge/x" {
		t.Fatalf("merged %+v", fl.merged)
	}
	if !strings.Contains(answer.Content, "Nothing was merged") || !strings.Contains(answer.Content, "moved") {
		t.Fatalf("a moved branch: %q", answer.Content)
	}

	fl.head = "c0ffee1234567"
	r.HandleComponent(l.onDrawn(r, chat.ComponentEvent{Server: "home", ChannelID: thread, User: chat.User{ID: owner, Name: "o"}, CustomID: mergeThis}), drawn{fakeResponder{l: l}, &answer})
	if !strings.Contains(answer.Content, "Merged `ccbridge/x`") {
		t.Fatalf("merge of what was shown: %q", answer.Content)
	}

	fl.dirty = true
	r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: thread, ParentID: channel, User: chat.User{ID: owner}, Name: "diff"}, drawn{fakeResponder{l: l}, &shown})
	if len(shown.Rows) != 0 {
		t.Fatalf("a diff with uncommitted changes offers a merge: %+v", shown.Rows)
	}
}

// Files made binary by .gitattributes are named in /diff's answer (the
// patch shows them as text); a secret in a file the patch carries as
// binary, which the transport cannot see, holds the patch back.
func TestDiffNamesAttributeBinariesAndHoldsBackHiddenSecrets(t *testing.T) {
	r, _, _, l, _ := newRouter(t)
	fl := &fakeLander{marked: []string{".env", "deploy.sh"}}
	r.opt.Land = fl
	threadWithTree(t, r)
	var reply chat.Reply
	r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: thread, ParentID: channel, User: chat.User{ID: owner}, Name: "diff"}, drawn{fakeResponder{l: l}, &reply})
	if !strings.Contains(reply.Content, "⚠️ marked binary by .gitattributes") || !strings.Contains(reply.Content, "`deploy.sh`") {
		t.Fatalf("/diff = %q", reply.Content)
	}
	posted := func() int {
		return len(slices.DeleteFunc(l.all(), func(op string) bool { return !strings.HasPrefix(op, "post ") }))
	}
	if posted() != 1 {
		t.Fatalf("the patch was not attached: %q", l.all())
	}

	fl.marked, fl.binary = nil, "\x00\x01AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"
	r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: thread, ParentID: channel, User: chat.User{ID: owner}, Name: "diff"}, drawn{fakeResponder{l: l}, &reply})
	if posted() != 1 {
		t.Fatalf("a patch carrying a secret in a binary file was attached: %q", l.all())
	}
	if !strings.Contains(reply.Content, "held back") || strings.Contains(reply.Content, "wJalrXUtnFEMI") {
		t.Fatalf("/diff = %q", reply.Content)
	}
}

// Landing commands have a budget of their own, well past the 30 seconds
// of a git call with no deadline (killed there mid-merge, git leaves its
// lock and half a merge behind), and their answers say that no hook ran.
func TestLandingHasItsOwnBudgetAndRunsNoHooks(t *testing.T) {
	r, _, _, l, _ := newRouter(t)
	fl := &fakeLander{}
	r.opt.Land = fl
	threadWithTree(t, r)
	var reply chat.Reply
	r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: thread, ParentID: channel, User: chat.User{ID: owner}, Name: "diff"}, drawn{fakeResponder{l: l}, &reply})
	if fl.budget < 5*time.Minute {
		t.Fatalf("a landing command's git has %v", fl.budget)
	}
	r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: thread, ParentID: channel, User: chat.User{ID: owner}, Name: "commit", Options: map[string]string{"message": "m"}}, drawn{fakeResponder{l: l}, &reply})
	if !strings.Contains(reply.Content, "Committed") || !strings.Contains(reply.Content, "hooks were not run") {
		t.Fatalf("/commit = %q", reply.Content)
	}
	r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: thread, ParentID: channel, User: chat.User{ID: owner}, Name: "merge"}, drawn{fakeResponder{l: l}, &reply})
	if !strings.Contains(reply.Content, "Merged") || !strings.Contains(reply.Content, "hooks were not run") {
		t.Fatalf("/merge = %q", reply.Content)
	}
}

// With names long enough that the session key is hashed into the
// custom_id, "Merge this" still names the commit shown (never hashed).
func TestMergeThisWithLongNames(t *testing.T) {
	server, project := "company-server-"+strings.Repeat("s", 40), "backend-service-"+strings.Repeat("p", 40)
	r, _, _, l, _ := newRouterNamed(t, server, project)
	fl := &fakeLander{head: strings.Repeat("ab", 20)}
	r.opt.Land = fl
	key := session.ThreadKey(server, project, thread)
	r.remember(key, func(g *state.Registered) {
		g.Server, g.Project, g.ThreadID, g.ThreadName = server, project, thread, "side"
		g.Worktree, g.Repo, g.Branch, g.BaseCommit = t.TempDir(), t.TempDir(), "ccbridge/x", "base0"
	})
	var shown, answer chat.Reply
	r.HandleCommand(chat.CommandEvent{Server: server, ChannelID: thread, ParentID: channel, User: chat.User{ID: owner}, Name: "diff"}, drawn{fakeResponder{l: l}, &shown})
	r.HandleComponent(l.onDrawn(r, chat.ComponentEvent{Server: server, ChannelID: thread, User: chat.User{ID: owner}, CustomID: buttonID(t, shown, "Merge this")}), drawn{fakeResponder{l: l}, &answer})
	if len(fl.merged) != 1 || len(fl.merged[0].Commit) != worktree.ShownLen || !strings.Contains(answer.Content, "Merged") {
		t.Fatalf("merged %+v: %q", fl.merged, answer.Content)
	}
}
