package land

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/session"
)

// What a thread's worktree kept when the thread closed says and offers: a
// message in the parent channel with what the worktree holds, and Delete
// anyway… (confirmed, bound to what was shown by the worktree's
// fingerprint) or Keep. The controls' ids come from the front end's
// dispatch (an id func of the control's action and arguments).

// WorktreeKind is the kind of a kept worktree's controls (chat.ID).
const WorktreeKind = "wt"

// The actions of a kept worktree's controls.
const (
	KeptDelete  = "delete"
	KeptConfirm = "confirm"
	KeptCancel  = "cancel"
	KeptKeep    = "keep"
)

// ThreadRef names a thread in its parent channel: a link, or (deleted)
// its name, which whoever started or renamed the thread chose: plain text.
func ThreadRef(threadID, name string, deleted bool) string {
	if !deleted {
		return "<#" + threadID + ">"
	}
	if name == "" {
		return "a deleted thread"
	}
	return "the deleted thread “" + chat.Plain(chat.Clip(name, 100)) + "”"
}

// KeptWorktree is the message about thread's worktree, kept on closing.
func KeptWorktree(thread string, rel session.Release, id func(args ...string) string) chat.Message {
	var why []string
	if rel.Changes.Dirty {
		why = append(why, "uncommitted changes")
	}
	if n := len(rel.Changes.Ignored); n > 0 {
		why = append(why, fmt.Sprintf("%d file(s) git ignores (such as %s)", n, chat.Plain(chat.Clip(rel.Changes.Ignored[0], 80))))
	}
	if rel.Changes.Ahead > 0 {
		why = append(why, fmt.Sprintf("%d commit(s) beyond its base", rel.Changes.Ahead))
	}
	if len(why) == 0 {
		why = append(why, "changes")
	}
	head := fmt.Sprintf("📦 The worktree of %s was kept: it has %s.\n`%s` on branch `%s`", thread, strings.Join(why, " and "), chat.Clip(rel.Path, 300), chat.Clip(rel.Branch, 200))
	return chat.Message{Content: keptMessage(head, rel.Changes.DiffStat), Rows: KeptRows(rel.Changes.Fingerprint, id)}
}

// keptNote is the room a kept-worktree message leaves for what its
// buttons add to it: the question, or the outcome (an error quoted).
const keptNote = 500

// keptMessage lays out a kept worktree's message: head, then its stat.
func keptMessage(head, stat string) string {
	if strings.TrimSpace(stat) == "" {
		stat = "(no diff against the base)"
	}
	room := chat.Limit - keptNote - utf8.RuneCountInString(head) - len("\n```\n\n```")
	return head + "\n```\n" + FitStat(stat, room) + "\n```"
}

// KeptRows are a kept worktree's controls, bound to its fingerprint.
func KeptRows(fingerprint string, id func(args ...string) string) []chat.Row {
	return []chat.Row{{Buttons: []chat.Button{
		{Label: "Delete anyway…", CustomID: id(KeptDelete, fingerprint), Style: chat.Danger},
		{Label: "Keep", CustomID: id(KeptKeep), Style: chat.Secondary},
	}}}
}

// ConfirmDeleteQuestion marks the confirmation step of a kept-worktree
// message.
const ConfirmDeleteQuestion = "\n**Delete the worktree and its branch, with their changes?** This cannot be undone."

// ConfirmDelete is Delete anyway…'s question under the message base.
func ConfirmDelete(base, fingerprint string, id func(args ...string) string) chat.Message {
	return chat.Message{Content: base + ConfirmDeleteQuestion, Rows: []chat.Row{{Buttons: []chat.Button{
		{Label: "Yes, delete it", CustomID: id(KeptConfirm, fingerprint), Style: chat.Danger},
		{Label: "Cancel", CustomID: id(KeptCancel, fingerprint), Style: chat.Secondary},
	}}}}
}

// KeptBase is a kept-worktree message without what its buttons added to
// it (the question, an outcome): its head and stat, within keptNote of the
// limit, so one note more always fits.
func KeptBase(content string) string {
	content, _, _ = strings.Cut(content, ConfirmDeleteQuestion)
	const fence = "\n```\n"
	open := strings.Index(content, fence)
	if open < 0 {
		return content
	}
	body := open + len(fence)
	if end := strings.Index(content[body:], "\n```"); end >= 0 {
		return content[:body+end+len("\n```")]
	}
	return content
}

// What the answers to a kept worktree's controls say under its message.
const (
	KeptForGood    = "\nKept. ccbridge will not offer to delete it again; remove it with `git worktree remove` when you are done."
	KeptOldControl = "This question is from an older ccbridge; nothing was deleted. Archive the thread again to be asked anew."
	KeptRunning    = "\n⚠️ Nothing was deleted: the thread's Claude session is running again in this worktree. You will be asked again when the thread is archived."
	KeptGone       = "\nThis thread has no worktree any more."
)

// KeptChanged is the message again once the worktree changed since a
// person was asked to delete it: nothing deleted, the stat of now, the
// controls bound to what it holds now.
func KeptChanged(base string, rel session.Release, id func(args ...string) string) chat.Message {
	head, _, _ := strings.Cut(base, "\n```")
	return chat.Message{Content: keptMessage(head+"\n⚠️ Nothing was deleted: the worktree changed since you were asked (new commits, edits or files). It now has:", rel.Changes.DiffStat),
		Rows: KeptRows(rel.Changes.Fingerprint, id)}
}

// KeptDeleted says the worktree and its branch are gone; lossless: it
// held nothing left to lose, so no force was needed.
func KeptDeleted(rel session.Release, lossless bool) chat.Message {
	if lossless {
		return chat.Message{Content: fmt.Sprintf("🗑️ Deleted the worktree `%s` and its branch `%s` (nothing in it was left to lose).", rel.Path, rel.Branch)}
	}
	return chat.Message{Content: fmt.Sprintf("🗑️ Deleted the worktree `%s` and its branch `%s`.", rel.Path, rel.Branch)}
}
