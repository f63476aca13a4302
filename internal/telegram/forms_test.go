package telegram

import (
	"strconv"
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/testutil/faketelegram"
)

var denyForm = chat.Modal{CustomID: "cb1|inst|denyform|x", Title: "Deny with instructions", Inputs: []chat.TextInput{
	{CustomID: "why", Label: "What should Claude do instead?", Required: true, Paragraph: true},
	{CustomID: "note", Label: "A note"}}}

// openDenyForm clicks Deny on a new card, whose handler opens denyForm,
// and returns the card and the first prompt.
func (w *world) openDenyForm(t *testing.T, by faketelegram.User) (string, int64, faketelegram.Message) {
	t.Helper()
	ch, id := w.card(t, permRows)
	w.answeredOnce(t, w.click(t, by, id, "Deny"))
	prompt, ok := w.tg.WaitMessage(wait, func(m faketelegram.Message) bool {
		return m.ForceReply && strings.Contains(m.Text, "What should Claude")
	})
	if !ok {
		t.Fatal("no prompt")
	}
	return ch, id, prompt
}

func opensDenyForm(_ chat.ComponentEvent, resp chat.Responder) { _ = resp.OpenModal(denyForm) }

// A form waiting for its answers outlives a restart of the daemon: the
// answer to a prompt asked before it lands after, with what the card
// showed, and the form's next input is asked by the new process.
func TestFormOutlivesARestart(t *testing.T) {
	w := newWorld(t)
	before := newRecorder()
	before.onClick = opensDenyForm
	stop := runBot(t, w, w.p, before, Options{IsOwner: w.onlyOwner})
	ch, id, prompt := w.openDenyForm(t, w.tg.Owner)
	stop()
	after := newRecorder()
	runBot(t, w, w.p, after, Options{IsOwner: w.onlyOwner}) // a new bot: nothing in memory
	if _, err := w.tg.ForceReplyAnswer(w.tg.Owner, w.tg.ChatID, prompt.MessageID, "use the test database"); err != nil {
		t.Fatal(err)
	}
	note, ok := w.tg.WaitMessage(wait, func(m faketelegram.Message) bool { return m.ForceReply && strings.Contains(m.Text, "A note") })
	if !ok {
		t.Fatal("the form's next input was not asked after the restart")
	}
	if _, err := w.tg.ForceReplyAnswer(w.tg.Owner, w.tg.ChatID, note.MessageID, "-"); err != nil {
		t.Fatal(err)
	}
	after.waitFor(t, "the form", func(r *recorder) bool { return len(r.modals) == 1 })
	ev := after.modals[0]
	if ev.CustomID != denyForm.CustomID || ev.Values["why"] != "use the test database" || ev.Values["note"] != "" || ev.MessageID != MessageID(w.tg.ChatID, id) ||
		ev.ChannelID != ch || ev.User.ID != w.owner() || chat.Face(ev.Content, ev.Rows) != chat.Face("Allow **Bash**?", permRows) {
		t.Errorf("form: %+v", ev)
	}
	if len(after.messages) != 0 {
		t.Errorf("a form's answer reached Claude: %+v", after.messages)
	}
}

// Any owner may answer a form's prompt, as any owner may press a card's
// buttons: the form is handed over as the answerer's, whom the core
// checks. A stranger's answer is not taken (nor the form spent by it).
func TestAnyOwnerAnswersAForm(t *testing.T) {
	w := newWorld(t)
	bob := w.tg.AddUser("Bob", true)
	h := newRecorder()
	h.onClick = opensDenyForm
	owners := func(id string) bool { return id == w.owner() || id == strconv.FormatInt(bob.ID, 10) }
	runBot(t, w, w.p, h, Options{IsOwner: owners})
	_, _, prompt := w.openDenyForm(t, w.tg.Owner)
	mallory := w.tg.AddUser("Mallory", true)
	if _, err := w.tg.ForceReplyAnswer(mallory, w.tg.ChatID, prompt.MessageID, "approve everything"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.tg.ForceReplyAnswer(bob, w.tg.ChatID, prompt.MessageID, "use the test database"); err != nil {
		t.Fatal(err)
	}
	note, ok := w.tg.WaitMessage(wait, func(m faketelegram.Message) bool { return m.ForceReply && strings.Contains(m.Text, "A note") })
	if !ok {
		t.Fatal("another owner's answer was not taken")
	}
	if _, err := w.tg.ForceReplyAnswer(bob, w.tg.ChatID, note.MessageID, "thanks"); err != nil {
		t.Fatal(err)
	}
	h.waitFor(t, "the form", func(r *recorder) bool { return len(r.modals) == 1 })
	if ev := h.modals[0]; ev.Values["why"] != "use the test database" || ev.User.ID != strconv.FormatInt(bob.ID, 10) {
		t.Errorf("form: %+v", ev)
	}
}
