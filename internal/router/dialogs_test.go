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
	m := dialogMessage("inst1", tg.key, trustDialog, now)
	if len(m.Rows) != 1 || len(m.Rows[0].Buttons) != 2 || m.Rows[0].Buttons[1].Label != "Yes, I trust this folder" {
		t.Fatalf("rows = %+v", m.Rows)
	}
	yes := m.Rows[0].Buttons[1].CustomID
	press := func(ch, user string) {
		r.HandleComponent(l.onDrawn(r, chat.ComponentEvent{Server: "home", ChannelID: ch, User: chat.User{ID: user}, CustomID: yes, Content: m.Content}), fakeResponder{l: l})
	}
	n := len(l.all())
	press(channel, "100000000000000099") // not an owner
	press("100000000000000051", owner)   // another thread's channel
	for _, op := range l.all()[n:] {
		if strings.HasPrefix(op, "answer") || !strings.HasPrefix(op, "respond ephemeral=true") {
			t.Fatalf("a refused choice did %q", l.all()[n:])
		}
	}
	press(channel, owner)
	l.waitFor(t, fmt.Sprintf("answer %s %s 1", tg.key, trustDialog.Hash))
	if last := l.all()[len(l.all())-1]; !strings.Contains(last, "✅ Answered by <@"+owner+">") || !strings.HasSuffix(last, "buttons=0") {
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
	n = len(l.all())
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
	m := dialogMessage("inst1", "home-api", d, now)
	l.check(m)
	if len(m.Rows) != 1 || m.Rows[0].Select == nil || len(m.Rows[0].Select.Options) != 7 {
		t.Fatalf("rows = %+v", m.Rows)
	}
	posted, _ := r.opt.Replier.Post(context.Background(), "home", channel, m)
	r.HandleComponent(l.on(channel, posted, m.Rows[0].Select.CustomID, "5"), fakeResponder{l: l, at: posted})
	l.waitFor(t, "answer home-api fedcba9876543210 5")
}
