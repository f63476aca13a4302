// Package land is what the landing commands do: /diff, /commit, /merge,
// /discard and /audit, over git (worktree.Git in production). It knows no
// chat platform: its answers are chat replies any front end draws, and its
// controls carry the ids the front end gives it (Lander.ID), so a click
// comes back to the front end's dispatch and then here.
package land

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ccbridge/ccbridge/internal/audit"
	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/redact"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/worktree"
)

// Git runs the git operations behind the landing commands.
type Git interface {
	Diff(ctx context.Context, dir, base string) (worktree.Diff, error)
	CommitAll(ctx context.Context, dir, message string) (string, error)
	Merge(ctx context.Context, m worktree.MergeSpec) (worktree.MergeResult, error)
	Discard(ctx context.Context, dir string) error
	CurrentBranch(ctx context.Context, dir string) string
	Contains(ctx context.Context, repo, branch, commit string) bool
	Inspect(ctx context.Context, path, base string) (worktree.Changes, error)
}

// Sessions ends a merged thread's session and removes its worktree.
type Sessions interface {
	Stop(ctx context.Context, key string) error
	ReleaseWorktree(ctx context.Context, key string, force bool) (session.Release, error)
}

// Kind is the kind of the landing controls' ids (chat.ID).
const Kind = "land"

// Limits of what a /diff answer shows and attaches.
const (
	maxPatchBytes = 8 << 20 // Discord's upload limit for bots is 10 MiB
	maxStatChars  = 1500
	// MaxMessage bounds a commit message typed in the form.
	MaxMessage   = 2000
	maxListed    = 900 // characters of conflicted file names shown
	defaultAudit = 10
	maxAudit     = 50
	// Budget bounds one landing command. git must finish what it
	// started (a large add, a merge): killed midway it leaves its lock and
	// half the work behind; Discord takes an answer for 15 minutes.
	Budget = 10 * time.Minute
)

// Busy answers a landing command while agent (its name for people) is
// mid-turn: git must not run under it.
func Busy(agent string) string {
	return "⏳ " + agent + " is mid-turn in this session; this waits for nobody's half-written files. Try again when the turn ends (or /stop it)."
}

// noHooks tells the person what ccbridge's git leaves out: it runs none of
// the repository's programs (hooks included) and signs nothing.
const noHooks = "-# git hooks were not run, and nothing was signed."

// Commands are the landing commands.
func Commands() []chat.CommandSpec {
	return []chat.CommandSpec{
		{Name: "diff", Description: "Show this session's changes, patch attached"},
		{Name: "commit", Description: "Commit every change (asks first outside a worktree)", Options: []chat.OptionSpec{
			{Name: "message", Description: "commit message (without one, a form asks for it)"}}},
		{Name: "merge", Description: "Merge this thread's branch into its base"},
		{Name: "discard", Description: "Throw away uncommitted changes (asks first)"},
		{Name: "audit", Description: "Last decisions: prompts, refusals, commits, merges", Options: []chat.OptionSpec{
			{Name: "count", Description: "how many (default 10)", Integer: true, MinValue: 1, MaxValue: maxAudit}}},
	}
}

// Target is where a landing command works.
type Target struct {
	Server  string
	Project string
	Dir     string // the working tree
	Base    string // the commit the diff is against ("HEAD": uncommitted only)
	Repo    string // the project checkout (threads with a worktree)
	Branch  string // the thread's branch
	Tree    bool   // a ccbridge worktree of a thread
	Label   string
	// From is the front end the person asked on (audit.FromDiscord, …,
	// the server's platform): commit messages and the audit log name it.
	From string
}

// Lander answers the landing commands and controls.
type Lander struct {
	Git      Git
	Sessions Sessions
	// ID names a control of an answer: its session key, action and
	// arguments (chat.ID's Args).
	ID func(key, action string, args ...string) string
	// AuditDir holds the audit log ("": decisions are not recorded).
	AuditDir string
	Log      *slog.Logger
}

// CommitModal is the form that asks for a commit message.
func (l Lander) CommitModal(key, action, prefill string) chat.Modal {
	// Discord refuses a pre-filled value longer than the input's max.
	if rs := []rune(prefill); len(rs) > MaxMessage {
		prefill = string(rs[:MaxMessage])
	}
	return chat.Modal{CustomID: l.ID(key, action), Title: "Commit message",
		Inputs: []chat.TextInput{{CustomID: "message", Label: "Message", Paragraph: true, Value: prefill, Required: true, MaxLength: MaxMessage}}}
}

// CheckoutWarning answers /commit in a session without a worktree of its
// own: it asks before committing on the checkout's branch.
func (l Lander) CheckoutWarning(key string, t Target) chat.Reply {
	return chat.Reply{Content: fmt.Sprintf("⚠️ This session works in the project checkout itself (%s), not in a ccbridge worktree: a commit lands directly on its current branch.", t.Dir),
		Rows: []chat.Row{{Buttons: []chat.Button{{Label: "Commit in the checkout anyway…", CustomID: l.ID(key, "commitask"), Style: chat.Danger}}}}}
}

// Shown is what /diff adds around the changes: who asked, a link to the
// web view, and where the patch goes.
type Shown struct {
	Who string // the person asking, as a mention
	// Link is the web view's link to the changes and its note, asked
	// for after git ran (nil: none).
	Link func(ctx context.Context) (chat.Button, string)
	// Attach posts the patch as a file beside the answer.
	Attach func(ctx context.Context, m chat.Message) error
}

// Diff answers /diff: the stat, the patch attached, and for a thread's
// branch a control that merges exactly the commit shown.
func (l Lander) Diff(ctx context.Context, key string, t Target, s Shown) chat.Reply {
	d, err := l.Git.Diff(ctx, t.Dir, t.Base)
	if err != nil {
		return chat.Reply{Content: "⚠️ " + chat.ErrText(err)}
	}
	if d.Empty() {
		return chat.Reply{Content: "No changes in " + t.Label + "."}
	}
	head := fmt.Sprintf("📝 Changes in %s: %d file(s), at `%s`, shown to %s.", t.Label, d.Files, Short(d.Head), s.Who)
	if len(d.Marked) > 0 {
		head += "\n⚠️ marked binary by .gitattributes, shown as text in the patch: " + ListFiles(d.Marked, maxListed)
	}
	var link chat.Button
	if s.Link != nil {
		var note string
		link, note = s.Link(ctx)
		head += note
	}
	reply := withPatch(ctx, t, d, head, s.Attach)
	var buttons []chat.Button
	if t.Tree && !d.Uncommitted {
		// The button merges exactly the commit shown, or nothing.
		buttons = append(buttons, chat.Button{Label: "Merge this", CustomID: l.ID(key, "merge", d.Head[:min(len(d.Head), worktree.ShownLen)]), Style: chat.Primary})
	}
	if link.Link() {
		buttons = append(buttons, link)
	}
	if len(buttons) > 0 {
		reply.Rows = []chat.Row{{Buttons: buttons}}
	}
	return reply
}

// withPatch answers /diff with its stat, attaching the patch when it can.
func withPatch(ctx context.Context, t Target, d worktree.Diff, head string, attach func(context.Context, chat.Message) error) chat.Reply {
	name := "changes.diff"
	if t.Branch != "" {
		name = strings.NewReplacer("/", "-", " ", "-").Replace(t.Branch) + ".diff"
	}
	if _, found := redact.Find(d.Binary); len(found) > 0 {
		// The transport finds secrets in text only: one in a file the
		// patch carries as binary (base85) would go out unseen.
		return chat.Reply{Content: withStat(head, d.Stat, fmt.Sprintf("\n🔒 The patch was held back: a file it carries as binary contains a secret (%s). Look at it in %s.", strings.Join(found, ", "), chat.Clip(t.Dir, 300)))}
	}
	if len(d.Patch) > maxPatchBytes {
		return chat.Reply{Content: withStat(head, d.Stat, fmt.Sprintf("\nThe patch is %.1f MB, too large to attach; run `git diff %s` in %s.", float64(len(d.Patch))/(1<<20), t.Base, chat.Clip(t.Dir, 300)))}
	}
	if err := attach(ctx, chat.Message{Content: "📎 The whole patch (" + strconv.Itoa(d.Files) + " file(s)):", Files: []chat.File{{Name: name, Data: []byte(d.Patch + "\n")}}}); err != nil {
		return chat.Reply{Content: withStat(head, d.Stat, "\n⚠️ Could not attach the patch: "+chat.ErrText(err))}
	}
	return chat.Reply{Content: withStat(head, d.Stat, "\nThe whole patch is attached below.")}
}

// maxStatLine bounds one line of a stat: the untracked and ignored files
// of a kept worktree's stat are one line each, of any length.
const maxStatLine = 200

// FitStat keeps a diff stat within about n characters, keeping its last
// line (git's total) and saying how many lines it left out.
func FitStat(stat string, n int) string {
	lines := strings.Split(strings.TrimSpace(stat), "\n")
	for i, l := range lines {
		lines[i] = chat.Clip(l, maxStatLine)
	}
	if all := strings.Join(lines, "\n"); utf8.RuneCountInString(all) <= n {
		return all
	}
	total := lines[len(lines)-1]
	var b strings.Builder
	shown := 0
	for _, l := range lines[:len(lines)-1] {
		if utf8.RuneCountInString(b.String())+utf8.RuneCountInString(l)+utf8.RuneCountInString(total)+60 > n {
			break
		}
		b.WriteString(l + "\n")
		shown++
	}
	fmt.Fprintf(&b, "… %d more line(s) not shown\n%s", len(lines)-1-shown, total)
	return b.String()
}

// withStat lays out a message of head, a stat in a code block and tail,
// the stat cut to the room the rest leaves (at most maxStatChars).
func withStat(head, stat, tail string) string {
	room := chat.Limit - utf8.RuneCountInString(head+tail) - len("\n```\n\n```")
	return head + "\n```\n" + FitStat(stat, min(room, maxStatChars)) + "\n```" + tail
}

// Commit commits every change in the target with the person's message.
func (l Lander) Commit(ctx context.Context, key string, t Target, msg string, u chat.User) chat.Reply {
	msg = strings.TrimSpace(msg) + "\n\nCommitted from " + audit.Title(t.From) + " by " + u.Name + " (" + u.ID + ") through ccbridge."
	commit, err := l.Git.CommitAll(ctx, t.Dir, msg)
	var nr *worktree.NotReadyError
	switch {
	case errors.Is(err, worktree.ErrNothingToCommit):
		return chat.Reply{Content: "Nothing to commit: the working tree is clean."}
	case errors.As(err, &nr):
		return chat.Reply{Content: "⚠️ Nothing was committed: " + chat.Clip(nr.Reason, 1500) + "."}
	case err != nil:
		return chat.Reply{Content: "⚠️ Could not commit: " + chat.ErrText(err)}
	}
	l.record(key, t, "commit", "commit in "+t.Dir, "committed "+Short(commit), u)
	first, _, _ := strings.Cut(msg, "\n")
	return chat.Reply{Content: fmt.Sprintf("✅ Committed `%s` on %s by %s: %s\n%s", Short(commit), t.Label, chat.Mention(u), chat.Clip(first, 300), noHooks)}
}

// AskDiscard answers /discard: it asks before throwing away the
// uncommitted changes there are.
func (l Lander) AskDiscard(ctx context.Context, key string, t Target, u chat.User) chat.Reply {
	d, err := l.Git.Diff(ctx, t.Dir, "HEAD")
	if err != nil {
		return chat.Reply{Content: "⚠️ " + chat.ErrText(err)}
	}
	if d.Empty() {
		return chat.Reply{Content: "Nothing to discard: there are no uncommitted changes."}
	}
	return l.DiscardQuestion(key, t, d, "", chat.Mention(u))
}

// DiscardQuestion asks to discard the changes d shows. The confirmation
// may be clicked hours later: it carries a hash of the patch, and
// discards only while the changes are still those (Discard).
func (l Lander) DiscardQuestion(key string, t Target, d worktree.Diff, note, who string) chat.Reply {
	return chat.Reply{Content: withStat(fmt.Sprintf("%s**Discard these uncommitted changes in %s?** This cannot be undone (asked by %s).", note, t.Label, who), d.Stat, ""),
		Rows: []chat.Row{{Buttons: []chat.Button{
			{Label: "Discard them", CustomID: l.ID(key, "discard", chat.ShortHash(d.Patch)), Style: chat.Danger},
			{Label: "Keep them", CustomID: l.ID(key, "keep"), Style: chat.Secondary},
		}}}}
}

// Discard discards the changes a person confirmed discarding, only while
// they are the ones shown (shown is the hash of their patch): edits made
// since, in the project checkout too for a channel's session, are never
// thrown away unseen.
func (l Lander) Discard(ctx context.Context, key string, t Target, shown string, u chat.User) chat.Reply {
	d, err := l.Git.Diff(ctx, t.Dir, "HEAD")
	switch {
	case err != nil:
		return chat.Reply{Content: "⚠️ Nothing was discarded: " + chat.ErrText(err)}
	case d.Empty():
		return chat.Reply{Content: "Nothing to discard: there are no uncommitted changes any more."}
	case chat.ShortHash(d.Patch) != shown:
		return l.DiscardQuestion(key, t, d, "⚠️ Nothing was discarded: the changes are not the ones shown, they changed since you were asked. Here they are now.\n", chat.Mention(u))
	}
	var nr *worktree.NotReadyError
	if err := l.Git.Discard(ctx, t.Dir); errors.As(err, &nr) {
		return chat.Reply{Content: "⚠️ Nothing was discarded: " + chat.Clip(nr.Reason, 1500) + "."}
	} else if err != nil {
		return chat.Reply{Content: "⚠️ Could not discard: " + chat.ErrText(err)}
	}
	l.record(key, t, "discard", "discard uncommitted changes in "+t.Dir, "discarded", u)
	return chat.Reply{Content: fmt.Sprintf("🗑️ Discarded the uncommitted changes in %s (by %s).", t.Label, chat.Mention(u))}
}

// Kept answers "Keep them" and "Keep it".
func Kept(u chat.User) chat.Message {
	return chat.Message{Content: "Kept (" + chat.Mention(u) + ")."}
}

// record writes a decision to the audit log under the project it was made
// in (the session's runtime record may not exist yet).
func (l Lander) record(key string, t Target, kind, asked, answer string, u chat.User) {
	if l.AuditDir == "" {
		return
	}
	if err := audit.Append(l.AuditDir, audit.Entry{Kind: kind, Server: t.Server, Project: t.Project, Session: key,
		Asked: asked, Answer: answer, Who: u.ID, From: t.From, Detail: u.Name}); err != nil && l.Log != nil {
		l.Log.Error("audit", "err", err)
	}
}

// ListFiles lists file names in code spans within about n characters,
// saying how many it left out.
func ListFiles(files []string, n int) string {
	var b strings.Builder
	for i, f := range files {
		item := "`" + strings.ReplaceAll(f, "`", "ʼ") + "`"
		if b.Len() > 0 && b.Len()+len(item) > n {
			fmt.Fprintf(&b, " and %d more", len(files)-i)
			break
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(item)
	}
	return b.String()
}

// Short is a commit as the answers show it.
func Short(commit string) string {
	if len(commit) > 10 {
		return commit[:10]
	}
	return commit
}
