package router

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ccbridge/ccbridge/internal/audit"
	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/redact"
	"github.com/ccbridge/ccbridge/internal/worktree"
)

// Lander runs the git operations behind /diff, /commit, /merge and
// /discard (worktree.Git in production).
type Lander interface {
	Diff(ctx context.Context, dir, base string) (worktree.Diff, error)
	CommitAll(ctx context.Context, dir, message string) (string, error)
	Merge(ctx context.Context, m worktree.MergeSpec) (worktree.MergeResult, error)
	Discard(ctx context.Context, dir string) error
	CurrentBranch(ctx context.Context, dir string) string
	Contains(ctx context.Context, repo, branch, commit string) bool
	Inspect(ctx context.Context, path, base string) (worktree.Changes, error)
}

// landKind is the custom_id kind of the landing commands' buttons and
// modals.
const landKind = "land"

// Limits of what a /diff answer shows and attaches.
const (
	maxPatchBytes = 8 << 20 // Discord's upload limit for bots is 10 MiB
	maxStatChars  = 1500
	maxMessage    = 2000 // the commit message form's input
	maxListed     = 900  // characters of conflicted file names shown
	defaultAudit  = 10
	maxAudit      = 50
	// landBudget bounds one landing command. git must finish what it
	// started (a large add, a merge): killed midway it leaves its lock and
	// half the work behind; Discord takes an answer for 15 minutes.
	landBudget = 10 * time.Minute
)

// landCtx is the context of one landing command.
func (r *Router) landCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.ctx, landBudget)
}

// landCommands are the slash commands of this file.
func landCommands() []chat.CommandSpec {
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

// landTarget is where a landing command works.
type landTarget struct {
	server  string
	project string
	dir     string // the working tree
	base    string // the commit the diff is against ("HEAD": uncommitted only)
	repo    string // the project checkout (threads with a worktree)
	branch  string // the thread's branch
	tree    bool   // a ccbridge worktree of a thread
	label   string
}

func (r *Router) landTarget(tg target) (landTarget, error) {
	if r.opt.Land == nil {
		return landTarget{}, errors.New("git commands are not available")
	}
	if tg.threadID != "" && r.opt.Registry != nil {
		if reg, err := r.opt.Registry.Sessions.Get(tg.key); err == nil && reg.Worktree != "" {
			return landTarget{server: tg.rt.server.Name, project: tg.rt.project.Name, dir: reg.Worktree, base: reg.BaseCommit, repo: reg.Repo, branch: reg.Branch, tree: true, label: "branch `" + reg.Branch + "`"}, nil
		}
	}
	dir := ""
	if s, err := r.opt.Store.Sessions.Get(tg.key); err == nil && s.Cwd != "" {
		dir = s.Cwd
	}
	if dir == "" {
		d, err := tg.rt.project.ProjectPath()
		if err != nil {
			return landTarget{}, err
		}
		dir = d
	}
	return landTarget{server: tg.rt.server.Name, project: tg.rt.project.Name, dir: dir, base: "HEAD", repo: dir, label: "`" + dir + "` (uncommitted changes)"}, nil
}

// busy reports whether Claude is mid-turn in the session: git must not
// run under it.
func (r *Router) busy(key string) bool {
	s, err := r.opt.Store.Sessions.Get(key)
	return err == nil && s.Busy
}

const busyText = "⏳ Claude is mid-turn in this session; this waits for nobody's half-written files. Try again when the turn ends (or /stop it)."

// landInteractive answers the commands that open a form or ask before
// acting, which must be the interaction's first answer (no deferral). It
// reports whether it answered.
func (r *Router) landInteractive(ev chat.CommandEvent, tg target, resp chat.Responder) bool {
	if ev.Name != "commit" || strings.TrimSpace(ev.Options["message"]) != "" {
		return false
	}
	lt, err := r.landTarget(tg)
	if err != nil || !lt.tree || r.busy(tg.key) {
		return false // answered by runLand after the deferral
	}
	_ = resp.OpenModal(r.commitModal(tg.key, "commit", r.commitDraft(tg)))
	return true
}

// commitDraft is the message a commit form opens with. A modal cannot
// follow a deferral, so the form must open within Discord's 3 seconds:
// no git runs first (a diff of a large tree, or a cold cache, takes
// longer). The thread's name says what its work was about; a clean tree
// is told so when the form is submitted (commit).
func (r *Router) commitDraft(tg target) string {
	if reg, err := r.opt.Registry.Sessions.Get(tg.key); err == nil && strings.TrimSpace(reg.ThreadName) != "" {
		return strings.TrimSpace(reg.ThreadName)
	}
	return "Update"
}

func (r *Router) landID(key, action string, args ...string) string {
	id, _ := chat.ID{Instance: r.opt.Instance, Kind: landKind, Args: append([]string{key, action}, args...)}.Encode()
	return id
}

func (r *Router) commitModal(key, action, prefill string) chat.Modal {
	// Discord refuses a pre-filled value longer than the input's max.
	if rs := []rune(prefill); len(rs) > maxMessage {
		prefill = string(rs[:maxMessage])
	}
	return chat.Modal{CustomID: r.landID(key, action), Title: "Commit message",
		Inputs: []chat.TextInput{{CustomID: "message", Label: "Message", Paragraph: true, Value: prefill, Required: true, MaxLength: maxMessage}}}
}

// runLand runs a landing command after the deferral; ok is false for a
// command that is not one of them.
func (r *Router) runLand(ev chat.CommandEvent, tg target) (chat.Reply, bool) {
	switch ev.Name {
	case "audit":
		return r.auditReply(tg, ev.Options["count"]), true
	case "diff", "commit", "merge", "discard":
	default:
		return chat.Reply{}, false
	}
	lt, err := r.landTarget(tg)
	if err != nil {
		return chat.Reply{Content: "⚠️ " + errText(err)}, true
	}
	if r.busy(tg.key) {
		return chat.Reply{Content: busyText}, true
	}
	ctx, cancel := r.landCtx()
	defer cancel()
	who := mention(ev.User)
	switch ev.Name {
	case "diff":
		return r.diffReply(ctx, ev, tg, lt), true
	case "commit":
		msg := strings.TrimSpace(ev.Options["message"])
		if !lt.tree {
			if msg != "" {
				r.pending.Store(tg.key, msg)
			}
			return chat.Reply{Content: fmt.Sprintf("⚠️ This session works in the project checkout itself (%s), not in a ccbridge worktree: a commit lands directly on its current branch.", lt.dir),
				Rows: []chat.Row{{Buttons: []chat.Button{{Label: "Commit in the checkout anyway…", CustomID: r.landID(tg.key, "commitask"), Style: chat.Danger}}}}}, true
		}
		if msg == "" {
			return chat.Reply{Content: "Nothing to commit: the worktree is clean."}, true
		}
		return r.commit(ctx, tg.key, lt, msg, ev.User), true
	case "merge":
		return r.merge(ctx, tg.key, lt, ev.User, ""), true
	case "discard":
		d, err := r.opt.Land.Diff(ctx, lt.dir, "HEAD")
		if err != nil {
			return chat.Reply{Content: "⚠️ " + errText(err)}, true
		}
		if d.Empty() {
			return chat.Reply{Content: "Nothing to discard: there are no uncommitted changes."}, true
		}
		return r.discardQuestion(tg.key, lt, d, "", who), true
	}
	return chat.Reply{}, false
}

// discardQuestion asks to discard the changes d shows. The confirmation
// may be clicked hours later: it carries a hash of the patch, and
// discards only while the changes are still those (discardConfirmed).
func (r *Router) discardQuestion(key string, lt landTarget, d worktree.Diff, note, who string) chat.Reply {
	return chat.Reply{Content: withStat(fmt.Sprintf("%s**Discard these uncommitted changes in %s?** This cannot be undone (asked by %s).", note, lt.label, who), d.Stat, ""),
		Rows: []chat.Row{{Buttons: []chat.Button{
			{Label: "Discard them", CustomID: r.landID(key, "discard", shortHash(d.Patch)), Style: chat.Danger},
			{Label: "Keep them", CustomID: r.landID(key, "keep"), Style: chat.Secondary},
		}}}}
}

func (r *Router) diffReply(ctx context.Context, ev chat.CommandEvent, tg target, lt landTarget) chat.Reply {
	d, err := r.opt.Land.Diff(ctx, lt.dir, lt.base)
	if err != nil {
		return chat.Reply{Content: "⚠️ " + errText(err)}
	}
	if d.Empty() {
		return chat.Reply{Content: "No changes in " + lt.label + "."}
	}
	head := fmt.Sprintf("📝 Changes in %s: %d file(s), at `%s`, shown to %s.", lt.label, d.Files, short(d.Head), mention(ev.User))
	if len(d.Marked) > 0 {
		head += "\n⚠️ marked binary by .gitattributes, shown as text in the patch: " + listFiles(d.Marked, maxListed)
	}
	link, note := r.diffLink(ctx, ev, tg) // web.go
	reply := r.withPatch(ctx, ev, tg, lt, d, head+note)
	var buttons []chat.Button
	if lt.tree && !d.Uncommitted {
		// The button merges exactly the commit shown, or nothing.
		buttons = append(buttons, chat.Button{Label: "Merge this", CustomID: r.landID(tg.key, "merge", d.Head[:min(len(d.Head), worktree.ShownLen)]), Style: chat.Primary})
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
func (r *Router) withPatch(ctx context.Context, ev chat.CommandEvent, tg target, lt landTarget, d worktree.Diff, head string) chat.Reply {
	name := "changes.diff"
	if lt.branch != "" {
		name = strings.NewReplacer("/", "-", " ", "-").Replace(lt.branch) + ".diff"
	}
	if _, found := redact.Find(d.Binary); len(found) > 0 {
		// The transport finds secrets in text only: one in a file the
		// patch carries as binary (base85) would go out unseen.
		return chat.Reply{Content: withStat(head, d.Stat, fmt.Sprintf("\n🔒 The patch was held back: a file it carries as binary contains a secret (%s). Look at it in %s.", strings.Join(found, ", "), clip(lt.dir, 300)))}
	}
	if len(d.Patch) > maxPatchBytes {
		return chat.Reply{Content: withStat(head, d.Stat, fmt.Sprintf("\nThe patch is %.1f MB, too large to attach; run `git diff %s` in %s.", float64(len(d.Patch))/(1<<20), lt.base, clip(lt.dir, 300)))}
	}
	if _, err := r.opt.Replier.Post(ctx, tg.rt.server.Name, ev.ChannelID, chat.Message{Content: "📎 The whole patch (" + strconv.Itoa(d.Files) + " file(s)):", Files: []chat.File{{Name: name, Data: []byte(d.Patch + "\n")}}}); err != nil {
		return chat.Reply{Content: withStat(head, d.Stat, "\n⚠️ Could not attach the patch: "+errText(err))}
	}
	return chat.Reply{Content: withStat(head, d.Stat, "\nThe whole patch is attached below.")}
}

// maxStatLine bounds one line of a stat: the untracked and ignored files
// of a kept worktree's stat are one line each, of any length.
const maxStatLine = 200

// fitStat keeps a diff stat within about n characters, keeping its last
// line (git's total) and saying how many lines it left out.
func fitStat(stat string, n int) string {
	lines := strings.Split(strings.TrimSpace(stat), "\n")
	for i, l := range lines {
		lines[i] = clip(l, maxStatLine)
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
	return head + "\n```\n" + fitStat(stat, min(room, maxStatChars)) + "\n```" + tail
}

func (r *Router) commit(ctx context.Context, key string, lt landTarget, msg string, u chat.User) chat.Reply {
	msg = strings.TrimSpace(msg) + "\n\nCommitted from Discord by " + u.Name + " (" + u.ID + ") through ccbridge."
	commit, err := r.opt.Land.CommitAll(ctx, lt.dir, msg)
	var nr *worktree.NotReadyError
	switch {
	case errors.Is(err, worktree.ErrNothingToCommit):
		return chat.Reply{Content: "Nothing to commit: the working tree is clean."}
	case errors.As(err, &nr):
		return chat.Reply{Content: "⚠️ Nothing was committed: " + clip(nr.Reason, 1500) + "."}
	case err != nil:
		return chat.Reply{Content: "⚠️ Could not commit: " + errText(err)}
	}
	r.audit(key, lt, "commit", "commit in "+lt.dir, "committed "+short(commit), u)
	first, _, _ := strings.Cut(msg, "\n")
	return chat.Reply{Content: fmt.Sprintf("✅ Committed `%s` on %s by %s: %s\n%s", short(commit), lt.label, mention(u), clip(first, 300), noHooks)}
}

// noHooks tells the person what ccbridge's git leaves out: it runs none of
// the repository's programs (hooks included) and signs nothing.
const noHooks = "-# git hooks were not run, and nothing was signed."

// landAction answers the landing buttons; args are what follows the
// action in the custom_id.
func (r *Router) landAction(ev chat.ComponentEvent, key, action string, args []string, resp chat.Responder) {
	tg, ok := r.targetByKey(ev.Server, ev.ChannelID, key)
	if !ok {
		_ = resp.Respond(chat.Reply{Content: "This button is no longer valid.", Ephemeral: true})
		return
	}
	key = tg.key // the custom_id may hold its hash
	lt, err := r.landTarget(tg)
	if err != nil {
		_ = resp.Respond(chat.Reply{Content: "⚠️ " + errText(err), Ephemeral: true})
		return
	}
	ctx, cancel := r.landCtx()
	defer cancel()
	switch action {
	case "commitask":
		msg, _ := r.pending.LoadAndDelete(key)
		prefill, _ := msg.(string)
		if prefill == "" {
			prefill = r.commitDraft(tg)
		}
		_ = resp.OpenModal(r.commitModal(key, "commitforce", prefill))
	case "discard":
		if len(args) != 1 {
			_ = resp.Respond(chat.Reply{Content: "This question is from an older ccbridge; nothing was discarded. Run /discard again.", Ephemeral: true})
			return
		}
		if r.busy(key) {
			_ = resp.Respond(chat.Reply{Content: busyText, Ephemeral: true})
			return
		}
		if err := resp.DeferUpdate(); err != nil {
			return
		}
		_, _ = resp.Edit(r.discardConfirmed(ctx, key, lt, args[0], ev.User))
	case "merge":
		r.mergeShown(ctx, key, lt, args, ev.User, resp)
	case "remove":
		r.removeMerged(ctx, key, tg, lt, ev.User, resp)
	case "keep":
		_, _ = resp.Update(chat.Message{Content: "Kept (" + mention(ev.User) + ")."})
	default:
		_ = resp.Respond(chat.Reply{Content: "This button is no longer valid.", Ephemeral: true})
	}
}

// discardConfirmed discards the changes a person confirmed discarding,
// only while they are the ones shown (shown is the hash of their patch):
// edits made since, in the project checkout too for a channel's session,
// are never thrown away unseen.
func (r *Router) discardConfirmed(ctx context.Context, key string, lt landTarget, shown string, u chat.User) chat.Reply {
	d, err := r.opt.Land.Diff(ctx, lt.dir, "HEAD")
	switch {
	case err != nil:
		return chat.Reply{Content: "⚠️ Nothing was discarded: " + errText(err)}
	case d.Empty():
		return chat.Reply{Content: "Nothing to discard: there are no uncommitted changes any more."}
	case shortHash(d.Patch) != shown:
		return r.discardQuestion(key, lt, d, "⚠️ Nothing was discarded: the changes are not the ones shown, they changed since you were asked. Here they are now.\n", mention(u))
	}
	var nr *worktree.NotReadyError
	if err := r.opt.Land.Discard(ctx, lt.dir); errors.As(err, &nr) {
		return chat.Reply{Content: "⚠️ Nothing was discarded: " + clip(nr.Reason, 1500) + "."}
	} else if err != nil {
		return chat.Reply{Content: "⚠️ Could not discard: " + errText(err)}
	}
	r.audit(key, lt, "discard", "discard uncommitted changes in "+lt.dir, "discarded", u)
	return chat.Reply{Content: fmt.Sprintf("🗑️ Discarded the uncommitted changes in %s (by %s).", lt.label, mention(u))}
}

// landModal commits with the message from the form.
func (r *Router) landModal(ev chat.ModalEvent, key, action string, resp chat.Responder) {
	tg, ok := r.targetByKey(ev.Server, ev.ChannelID, key)
	if !ok || (action != "commit" && action != "commitforce") {
		_ = resp.Respond(chat.Reply{Content: "This form is no longer valid.", Ephemeral: true})
		return
	}
	key = tg.key // the custom_id may hold its hash
	if err := resp.Defer(false); err != nil {
		return
	}
	lt, err := r.landTarget(tg)
	switch {
	case err != nil:
		_, _ = resp.Edit(chat.Reply{Content: "⚠️ " + errText(err)})
	case r.busy(key):
		_, _ = resp.Edit(chat.Reply{Content: busyText})
	case strings.TrimSpace(ev.Values["message"]) == "":
		_, _ = resp.Edit(chat.Reply{Content: "⚠️ A commit needs a message."})
	default:
		ctx, cancel := r.landCtx()
		defer cancel()
		_, _ = resp.Edit(r.commit(ctx, key, lt, ev.Values["message"], ev.User))
	}
}

// targetByKey finds the target of a channel or thread whose session key is
// known (component and modal events do not carry a thread's parent).
func (r *Router) targetByKey(server, channelID, key string) (target, bool) {
	for _, s := range r.conf().Servers {
		if s.Name != server {
			continue
		}
		for _, p := range s.Projects {
			// A long key reaches the custom_id hashed (chat.ID.Encode).
			if tg, ok := r.resolve(server, channelID, p.ChannelID); ok && chat.ArgIs(key, tg.key) {
				return tg, true
			}
		}
	}
	return target{}, false
}

// audit records a decision made from Discord under the project it was made
// in (the session's runtime record may not exist yet).
func (r *Router) audit(key string, lt landTarget, kind, asked, answer string, u chat.User) {
	if r.opt.Registry == nil {
		return
	}
	if err := audit.Append(r.opt.Registry.Dir.Root(), audit.Entry{Kind: kind, Server: lt.server, Project: lt.project, Session: key,
		Asked: asked, Answer: answer, Who: u.ID, From: audit.FromDiscord, Detail: u.Name}); err != nil {
		r.opt.Log.Error("audit", "err", err)
	}
}

// auditReply answers /audit with the last decisions of the project it was
// run in (its channel's and its threads' sessions): the answer is public in
// that channel, and the log, shared by every server and project of this
// machine, holds commands and paths that the people of another server, or
// of another channel, may not see.
func (r *Router) auditReply(tg target, count string) chat.Reply {
	n := defaultAudit
	if v, err := strconv.Atoi(strings.TrimSpace(count)); err == nil && v > 0 {
		n = min(v, maxAudit)
	}
	if r.opt.Registry == nil {
		return chat.Reply{Content: "No audit log."}
	}
	all, err := audit.Last(r.opt.Registry.Dir.Root(), math.MaxInt)
	if err != nil {
		return chat.Reply{Content: "⚠️ " + errText(err)}
	}
	var es []audit.Entry
	for i := len(all) - 1; i >= 0 && len(es) < n; i-- {
		if r.auditedIn(all[i], tg.rt) {
			es = append(es, all[i])
		}
	}
	slices.Reverse(es)
	if len(es) == 0 {
		return chat.Reply{Content: "The audit log holds no decisions of this project."}
	}
	lines := make([]string, 0, len(es))
	for _, e := range es {
		who := e.Who
		if e.From == audit.FromDiscord && who != "" {
			who = "<@" + who + ">"
		}
		line := fmt.Sprintf("`%s` **%s** %s · %s", e.At.Format("01-02 15:04:05"), e.Answer, e.From, clip(e.Asked, 120))
		if who != "" {
			line += " · " + who
		}
		if e.Rule != "" {
			line += " · rule `" + e.Rule + "`"
		}
		lines = append(lines, line)
	}
	// Newest last; drop the oldest until it fits.
	for len(lines) > 1 && utf8.RuneCountInString(strings.Join(lines, "\n"))+80 > chat.Limit {
		lines = lines[1:]
	}
	head := fmt.Sprintf("🧾 The last %d decision(s) in this project, newest last:\n", len(lines))
	return chat.Reply{Content: head + strings.Join(lines, "\n")}
}

// auditedIn reports whether an entry belongs to a project: its server, and
// its project as recorded or, for entries that name only their session
// (permission prompts), as that session's records say. An entry that
// cannot be placed is left out.
func (r *Router) auditedIn(e audit.Entry, rt route) bool {
	if e.Server != rt.server.Name {
		return false
	}
	project := e.Project
	if project == "" && e.Session != "" {
		if g, err := r.opt.Registry.Sessions.Get(e.Session); err == nil && g.Server == e.Server {
			project = g.Project
		} else if s, err := r.opt.Store.Sessions.Get(e.Session); err == nil && s.Server == e.Server {
			project = s.Project
		}
	}
	return project != "" && project == rt.project.Name
}

// listFiles lists file names in code spans within about n characters,
// saying how many it left out.
func listFiles(files []string, n int) string {
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

func short(commit string) string {
	if len(commit) > 10 {
		return commit[:10]
	}
	return commit
}
