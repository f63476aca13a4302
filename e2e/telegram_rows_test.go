//go:build e2e

package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/testutil/fakemodel"
	"github.com/ccbridge/ccbridge/internal/testutil/faketelegram"
)

// Issue 27 §3, the rows of the Telegram table not in telegram_test.go.

// waitIn waits for a message of the bot in thread that pred accepts.
func (tb *tgBridge) waitIn(thread int64, what string, pred func(faketelegram.Message) bool) faketelegram.Message {
	tb.t.Helper()
	m, ok := tb.tg.WaitMessage(long, func(m faketelegram.Message) bool {
		return m.From != nil && m.From.IsBot && m.MessageThreadID == thread && !m.Deleted && pred(m)
	})
	if !ok {
		var seen []string
		for _, m := range tb.tg.Messages(tb.tg.ChatID, thread) {
			seen = append(seen, fmt.Sprintf("%d %q", m.MessageID, m.Text))
		}
		tb.t.Fatalf("no %s in topic %d; it holds:\n%s", what, thread, strings.Join(seen, "\n"))
	}
	return m
}

// waitCardText waits until the bot's message id reads want.
func (tb *tgBridge) waitCardText(id int64, want string) faketelegram.Message {
	tb.t.Helper()
	m, ok := tb.tg.WaitMessage(long, func(m faketelegram.Message) bool { return m.MessageID == id && strings.Contains(m.Text, want) })
	if !ok {
		now, _ := tb.tg.Message(tb.tg.ChatID, id)
		tb.t.Fatalf("message %d never read %q; it reads %q", id, want, now.Text)
	}
	return m
}

// click presses the button of m whose label holds label, as who, and
// waits for the click's answer.
func (tb *tgBridge) click(t *testing.T, who faketelegram.User, m faketelegram.Message, label string) faketelegram.Answer {
	t.Helper()
	return tb.press(t, who, m, button(t, m, label))
}

func (tb *tgBridge) press(t *testing.T, who faketelegram.User, m faketelegram.Message, data string) faketelegram.Answer {
	t.Helper()
	qid, err := tb.tg.Click(who, tb.tg.ChatID, m.MessageID, data)
	if err != nil {
		t.Fatal(err)
	}
	if !tb.tg.WaitFor(10*time.Second, func() bool { _, ok := tb.tg.Answered(qid); return ok }) {
		t.Fatalf("the click on %q was never answered", data)
	}
	a, _ := tb.tg.Answered(qid)
	return a
}

// answerForm waits for the ForceReply prompt that holds want and replies
// text to it, as the owner.
func (tb *tgBridge) answerForm(t *testing.T, want, text string) {
	t.Helper()
	prompt := tb.waitBot("a form asking "+want, func(m faketelegram.Message) bool { return m.ForceReply && strings.Contains(m.Text, want) })
	if _, err := tb.tg.ForceReplyAnswer(tb.tg.Owner, tb.tg.ChatID, prompt.MessageID, text); err != nil {
		t.Fatal(err)
	}
}

// `/thread name` opens a forum topic that is its own session: its first
// prompt and the next message in it reach a pane of its own, the replies
// land in the topic, and the project's topic keeps its own session.
func TestTelegramThreadIsAForumTopicWithItsOwnSession(t *testing.T) {
	t.Parallel()
	tb := newTelegramBridge(t, "")
	tb.say("/thread fix the parser\nlook at the parser")
	var topic int64
	if !tb.tg.WaitFor(long, func() bool {
		for _, tp := range tb.tg.Topics(tb.tg.ChatID) {
			if tp.Name == "fix the parser" {
				topic = tp.MessageThreadID
			}
		}
		return topic != 0
	}) {
		t.Fatalf("/thread opened no topic: %+v", tb.tg.Topics(tb.tg.ChatID))
	}
	tb.waitIn(topic, "the thread's first reply", func(m faketelegram.Message) bool { return strings.Contains(m.Text, "ok: look at the parser") })
	if n := len(tb.panes()); n != 1 {
		t.Fatalf("%d panes, want the thread's alone", n)
	}
	tb.tg.OwnerText(topic, "and the lexer")
	tb.waitIn(topic, "the thread's second reply", func(m faketelegram.Message) bool { return strings.Contains(m.Text, "ok: and the lexer") })
	tb.say("in the project")
	tb.waitReply("ok: in the project")
	if n := len(tb.panes()); n != 2 {
		t.Fatalf("%d panes, want the thread's and the project's", n)
	}
	for _, m := range tb.tg.Messages(tb.tg.ChatID, tb.topic) {
		if strings.Contains(m.Text, "the lexer") || strings.Contains(m.Text, "ok: look at the parser") {
			t.Fatalf("the thread's turn landed in the project's topic: %q", m.Text)
		}
	}
}

// Deny with instructions: the card asks for them by a ForceReply message;
// the reply to it is what Claude gets, and the command does not run.
func TestTelegramDenyWithInstructions(t *testing.T) {
	t.Parallel()
	tb := newTelegramBridge(t, "")
	tb.model.Script("SCN_TG_DENY", fakemodel.Tool("", "Bash", map[string]any{"command": "touch denied.txt", "description": "Touch it"}))
	tb.say("SCN_TG_DENY")
	card := tb.waitBot("the card", func(m faketelegram.Message) bool {
		return strings.Contains(m.Text, "touch denied.txt") && m.ReplyMarkup != nil
	})
	tb.click(t, tb.tg.Owner, card, "Deny with instructions")
	tb.answerForm(t, "What should Claude do instead", "use echo instead")
	tb.waitCardText(card.MessageID, "Denied by")
	r := tb.model.WaitRequest(t, long, "the denial", func(r fakemodel.Request) bool { return len(r.ToolResults) == 1 })
	if got := r.ToolResults[0]; got.Content != "use echo instead" || !got.IsError {
		t.Fatalf("tool_result = %+v", got)
	}
	tb.waitReply("Done. Last tool result: use echo instead")
	if _, err := os.Stat(filepath.Join(tb.dir, "denied.txt")); err == nil {
		t.Fatal("the denied command ran")
	}
}

// AskUserQuestion: Other… asks by ForceReply; a multiSelect is toggled
// option by option (its Other… too) and sent with its own Submit, named
// after it beside the card's Submit; Other's text joins the ticked
// options. Claude gets both answers.
func TestTelegramQuestionsMultiSelectAndOther(t *testing.T) {
	t.Parallel()
	tb := newTelegramBridge(t, "")
	tb.model.Script("SCN_TG_ASK", fakemodel.Tool("", "AskUserQuestion", askInput))
	tb.say("SCN_TG_ASK")
	card := tb.waitBot("the question card", func(m faketelegram.Message) bool {
		return strings.Contains(m.Text, "Which color do you prefer?") && m.ReplyMarkup != nil
	})
	tb.click(t, tb.tg.Owner, card, "Other")
	tb.answerForm(t, "Which color", "Purple")
	card = tb.waitCardText(card.MessageID, "→ Purple")
	var ticks []string // Logging, Tracing and the select's Other…
	for _, row := range card.ReplyMarkup.InlineKeyboard {
		for _, b := range row {
			_, place, _ := strings.Cut(b.CallbackData, ":")
			if strings.HasPrefix(place, "o") && slices.Contains([]string{"Logging", "Tracing", "Other…"}, b.Text) {
				ticks = append(ticks, b.CallbackData)
			}
		}
	}
	if len(ticks) != 3 {
		t.Fatalf("the multiSelect's options are not buttons: %+v", card.ReplyMarkup)
	}
	for _, data := range ticks {
		tb.press(t, tb.tg.Owner, card, data)
	}
	if !tb.tg.WaitFor(10*time.Second, func() bool {
		m, _ := tb.tg.Message(tb.tg.ChatID, card.MessageID)
		n := 0
		for _, row := range m.ReplyMarkup.InlineKeyboard {
			for _, b := range row {
				if strings.HasPrefix(b.Text, "✓ ") {
					n++
				}
			}
		}
		return n == 3
	}) {
		m, _ := tb.tg.Message(tb.tg.ChatID, card.MessageID)
		t.Fatalf("the toggles are not shown: %+v", m.ReplyMarkup)
	}
	m, _ := tb.tg.Message(tb.tg.ChatID, card.MessageID)
	submits := 0
	for _, row := range m.ReplyMarkup.InlineKeyboard {
		for _, b := range row {
			submits += strings.Count(b.Text, "Submit")
		}
	}
	if submits != 2 {
		t.Fatalf("%d Submits, want the select's and the card's: %+v", submits, m.ReplyMarkup)
	}
	tb.click(t, tb.tg.Owner, m, "Submit — 2. Features")
	tb.answerForm(t, "Which features", "Profiling")
	tb.waitCardText(card.MessageID, "Answered by")
	r := tb.model.WaitRequest(t, long, "the answers", func(r fakemodel.Request) bool { return len(r.ToolResults) == 1 })
	got := r.ToolResults[0].Content
	for _, want := range []string{`"Which color do you prefer?"="Purple"`, `"Which features do you want?"="Logging, Tracing, Profiling"`} {
		if !strings.Contains(got, want) {
			t.Errorf("tool_result %q lacks %s", got, want)
		}
	}
}

// waitTgMode waits until the session's last hook payload carried mode.
func (tb *tgBridge) waitMode(key, mode string) {
	tb.t.Helper()
	deadline := time.Now().Add(long)
	for {
		s, _ := tb.store.Sessions.Get(key)
		if s.ModeSeen == mode {
			return
		}
		if time.Now().After(deadline) {
			tb.t.Fatalf("%s: permission_mode %q, want %q", key, s.ModeSeen, mode)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Plan approval: Keep planning… asks for feedback by ForceReply and Claude
// stays in plan mode; the next plan's Approve — accept edits approves it.
func TestTelegramPlanKeepPlanningThenApprove(t *testing.T) {
	t.Parallel()
	tb := newTelegramBridge(t, "")
	tb.bridge.stop()
	cfg, _ := os.ReadFile(tb.cfg)
	if err := os.WriteFile(tb.cfg, []byte(strings.Replace(string(cfg), `permission_mode = "default"`, `permission_mode = "plan"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	tb.start()
	tb.model.Script("SCN_TG_PLAN_KEEP", planSteps...)
	tb.model.Script("SCN_TG_PLAN_OK", planSteps...)
	tb.say("SCN_TG_PLAN_KEEP")
	card := tb.waitBot("the plan card", func(m faketelegram.Message) bool {
		return strings.Contains(m.Text, "Claude's plan") && m.ReplyMarkup != nil
	})
	if !strings.Contains(card.Text, "1. Step one: create a.txt") {
		t.Errorf("the card does not show the plan: %q", card.Text)
	}
	tb.click(t, tb.tg.Owner, card, "Keep planning")
	tb.answerForm(t, "Keep planning", "add a docs step")
	tb.waitCardText(card.MessageID, "Keep planning")
	tb.model.WaitRequest(t, long, "the feedback", func(r fakemodel.Request) bool {
		return strings.Contains(r.LastUserText, "SCN_TG_PLAN_KEEP") && len(r.ToolResults) == 1 && r.ToolResults[0].Content == "add a docs step"
	})
	tb.waitReply("add a docs step")
	tb.waitMode(tb.key, "plan")

	tb.say("SCN_TG_PLAN_OK")
	card2 := tb.waitBot("the second plan card", func(m faketelegram.Message) bool {
		return m.MessageID != card.MessageID && strings.Contains(m.Text, "Claude's plan") && m.ReplyMarkup != nil
	})
	tb.click(t, tb.tg.Owner, card2, "Approve — accept edits")
	tb.waitCardText(card2.MessageID, "Plan approved")
	tb.waitReply("User has approved your plan")
	tb.waitMode(tb.key, "acceptEdits")
}

// A document and a photo reach Claude as files in the runtime folder; a
// file Claude names from its outputs folder comes back by sendDocument,
// one outside it is refused.
func TestTelegramAttachmentsInAndFilesOut(t *testing.T) {
	t.Parallel()
	tb := newTelegramBridge(t, "")
	attached := func(marker string) (string, []byte) {
		t.Helper()
		r := tb.model.WaitRequest(t, long, "the attachment of "+marker, func(r fakemodel.Request) bool {
			return strings.Contains(r.LastUserText, marker) && strings.Contains(r.LastUserText, "Attached files:")
		})
		i := strings.Index(r.LastUserText, "\n- ")
		path, _, _ := strings.Cut(r.LastUserText[i+3:], "\n")
		if !strings.HasPrefix(path, tb.runtime) {
			t.Fatalf("attachment path %q is not in the runtime folder", path)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return path, got
	}
	doc := []byte("name,value\na,1\n")
	tb.tg.OwnerDocument(tb.topic, "../data 1.csv", doc, "SCN_TG_DOC read this")
	if path, got := attached("SCN_TG_DOC"); !bytes.Equal(got, doc) || !strings.HasSuffix(path, "data_1.csv") {
		t.Fatalf("document at %q holds %q", path, got)
	}
	photo := []byte{0xff, 0xd8, 0xff, 0xe0, 0, 16, 'J', 'F', 'I', 'F', 0, 1, 0xff, 0xd9}
	tb.tg.OwnerPhoto(tb.topic, photo, "SCN_TG_PHOTO see this")
	if path, got := attached("SCN_TG_PHOTO"); !bytes.Equal(got, photo) {
		t.Fatalf("photo at %q holds %v", path, got)
	}

	outputs, err := tb.store.Dir.Outputs(tb.key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outputs, "out.txt"), []byte("report body"), 0o600); err != nil {
		t.Fatal(err)
	}
	tb.model.Script("SCN_TG_SEND", fakemodel.Text("Here it is. [DISCORD_ATTACH: out.txt] [DISCORD_ATTACH: ../../etc/passwd]"))
	tb.say("SCN_TG_SEND the report")
	reply := tb.waitReply("Here it is.")
	if !strings.Contains(reply.Text, "not attached: ../../etc/passwd is outside the outputs folder") || strings.Contains(reply.Text, "DISCORD_ATTACH") {
		t.Fatalf("reply = %q", reply.Text)
	}
	var docs []faketelegram.Message
	if !tb.tg.WaitFor(long, func() bool {
		docs = nil
		for _, m := range tb.tg.Messages(tb.tg.ChatID, tb.topic) {
			if m.From != nil && m.From.IsBot && m.Document != nil {
				docs = append(docs, m)
			}
		}
		return len(docs) > 0
	}) {
		t.Fatal("no document was sent")
	}
	time.Sleep(time.Second) // a second document would come now
	if len(docs) != 1 || docs[0].Document.FileName != "out.txt" {
		t.Fatalf("documents sent: %+v", docs)
	}
	if got, ok := tb.tg.File(docs[0].Document.FileID); !ok || string(got) != "report body" {
		t.Fatalf("the document holds %q", got)
	}
}

// A voice note is transcribed and reviewed as on Discord: Send puts the
// words in; Edit… asks for new words by ForceReply; Cancel sends nothing.
func TestTelegramVoiceNoteReview(t *testing.T) {
	t.Parallel()
	command, control := fakeTranscriber(t)
	tb := newTelegramBridge(t, fmt.Sprintf("[voice]\ncommand = [%q, \"{file}\"]\ntimeout = \"10s\"\n", command))
	review := func(note faketelegram.Message, want string) faketelegram.Message {
		t.Helper()
		return tb.waitBot("the review of the note", func(m faketelegram.Message) bool {
			return m.ReplyToMessage != nil && m.ReplyToMessage.MessageID == note.MessageID && strings.Contains(m.Text, want) && m.ReplyMarkup != nil
		})
	}
	setTranscriber(t, control, "VOICE_TG_ONE please list the files")
	note := tb.tg.OwnerVoice(tb.topic, oggNote(t), 1)
	r1 := review(note, "VOICE_TG_ONE please list the files")
	if !strings.Contains(r1.Text, "not sent yet") {
		t.Fatalf("review = %q", r1.Text)
	}
	time.Sleep(500 * time.Millisecond)
	if got := promptsWith(tb.model, "VOICE_TG_ONE"); len(got) != 0 {
		t.Fatalf("Claude got %q before Send", got)
	}
	tb.click(t, tb.tg.Owner, r1, "Send")
	tb.waitReply("ok: VOICE_TG_ONE please list the files")
	if got := promptsWith(tb.model, "VOICE_TG_ONE"); !slices.Equal(got, []string{"VOICE_TG_ONE please list the files"}) {
		t.Fatalf("Claude got %q", got)
	}

	setTranscriber(t, control, "VOICE_TG_TWO fix the flaky text")
	r2 := review(tb.tg.OwnerVoice(tb.topic, oggNote(t), 1), "VOICE_TG_TWO")
	tb.click(t, tb.tg.Owner, r2, "Edit")
	tb.answerForm(t, "What Claude gets", "VOICE_TG_TWO fix the flaky test")
	tb.waitReply("ok: VOICE_TG_TWO fix the flaky test")

	setTranscriber(t, control, "VOICE_TG_THREE delete everything")
	r3 := review(tb.tg.OwnerVoice(tb.topic, oggNote(t), 1), "VOICE_TG_THREE")
	tb.click(t, tb.tg.Owner, r3, "Cancel")
	tb.waitCardText(r3.MessageID, "Cancelled")
	if got := promptsWith(tb.model, "VOICE_TG_THREE"); len(got) != 0 {
		t.Fatalf("a cancelled transcript reached Claude: %q", got)
	}
}

// A 429 on sendMessage: the reply waits retry_after and is sent once.
func TestTelegram429RetryAfterHonoured(t *testing.T) {
	t.Parallel()
	tb := newTelegramBridge(t, "")
	tb.say("warm up")
	tb.waitReply("ok: warm up")
	tb.tg.RateLimit("sendMessage", 1, 2)
	tb.say("under a rate limit")
	tb.waitReply("ok: under a rate limit")
	time.Sleep(3 * time.Second) // a doubled send would come now
	var limited, sent []faketelegram.Call
	for _, c := range tb.tg.CallsTo("sendMessage") {
		switch {
		case c.Status == 429:
			limited = append(limited, c)
		case c.Status == 200 && strings.Contains(c.Params["text"], "ok: under a rate limit"):
			sent = append(sent, c)
		}
	}
	if len(limited) != 1 || len(sent) != 1 {
		t.Fatalf("%d sends refused with 429, %d replies sent; want 1 and 1", len(limited), len(sent))
	}
	if wait := sent[0].At.Sub(limited[0].At); wait < 2*time.Second {
		t.Fatalf("sent again %v after a 429 asking for 2 s", wait)
	}
	n := 0
	for _, m := range tb.tg.Messages(tb.tg.ChatID, tb.topic) {
		if strings.Contains(m.Text, "ok: under a rate limit") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the reply shows %d times", n)
	}
}

// A stranger's click on a card is answered (the spinner stops) and does
// nothing: the card stays, the command does not run; the owner's click
// still works after.
func TestTelegramStrangerClickDoesNothing(t *testing.T) {
	t.Parallel()
	tb := newTelegramBridge(t, "")
	eve := tb.tg.AddUser("Eve", true)
	tb.model.Script("SCN_TG_EVE", fakemodel.Tool("", "Bash", map[string]any{"command": "touch by-eve.txt", "description": "Make a file"}))
	tb.say("SCN_TG_EVE")
	card := tb.waitBot("the card", func(m faketelegram.Message) bool {
		return strings.Contains(m.Text, "touch by-eve.txt") && m.ReplyMarkup != nil
	})
	tb.click(t, eve, card, "Allow")
	time.Sleep(2 * time.Second) // an approval would run the command now
	if _, err := os.Stat(filepath.Join(tb.dir, "by-eve.txt")); err == nil {
		t.Fatal("a stranger's click ran the command")
	}
	if now, _ := tb.tg.Message(tb.tg.ChatID, card.MessageID); now.Text != card.Text || now.ReplyMarkup == nil {
		t.Fatalf("a stranger's click changed the card: %q", now.Text)
	}
	tb.click(t, tb.tg.Owner, card, "Allow")
	tb.waitReply("Done. Last tool result")
	if _, err := os.Stat(filepath.Join(tb.dir, "by-eve.txt")); err != nil {
		t.Fatal("the owner's Allow did not run the command")
	}
}

// tgFooter is the footer line as Telegram shows it: the figures, with no
// Discord subtext marker.
var tgFooter = regexp.MustCompile(`\nOpus 5\.5 · ctx <?\d+% · \$\d+\.\d\d`)

// The default config ends each reply with the footer, shown as Telegram
// can (Discord's "-# " subtext is Markdown Telegram lacks).
func TestTelegramFooterInTheDefaultConfig(t *testing.T) {
	t.Parallel()
	tb := newTelegramBridge(t, "")
	tb.say("hello footer")
	reply := tb.waitReply("ok: hello footer")
	if _, ok := tb.tg.WaitMessage(long, func(m faketelegram.Message) bool {
		return m.MessageID == reply.MessageID && tgFooter.MatchString(m.Text)
	}); !ok {
		now, _ := tb.tg.Message(tb.tg.ChatID, reply.MessageID)
		t.Fatalf("the reply has no footer: %q", now.Text)
	}
	now, _ := tb.tg.Message(tb.tg.ChatID, reply.MessageID)
	if strings.Contains(now.Text, "-#") {
		t.Fatalf("the footer shows Discord's subtext marker: %q", now.Text)
	}
}

// A 429 on a permission card and on the middle part of a long reply: each
// is sent again after retry_after, once; the card works and the reply
// arrives whole, in order.
func TestTelegram429OnACardAndMidReplyLosesNothing(t *testing.T) {
	t.Parallel()
	tb := newTelegramBridge(t, "")
	var mu sync.Mutex
	cards, parts := 0, 0
	tb.tg.Hook("sendMessage", func(c faketelegram.Call) *faketelegram.Error {
		mu.Lock()
		defer mu.Unlock()
		switch text := c.Params["text"]; {
		case strings.Contains(text, "touch rate-limited.txt"):
			if cards++; cards == 1 {
				return &faketelegram.Error{Code: 429, Description: "Too Many Requests: retry after 1", RetryAfter: 1}
			}
		case strings.Contains(text, "of the long reply"):
			if parts++; parts == 2 {
				return &faketelegram.Error{Code: 429, Description: "Too Many Requests: retry after 1", RetryAfter: 1}
			}
		}
		return nil
	})
	tb.model.Script("SCN_TG_RL_CARD", fakemodel.Tool("", "Bash", map[string]any{"command": "touch rate-limited.txt", "description": "Make a file"}))
	tb.say("SCN_TG_RL_CARD")
	card := tb.waitBot("the card", func(m faketelegram.Message) bool {
		return strings.Contains(m.Text, "touch rate-limited.txt") && m.ReplyMarkup != nil
	})
	tb.click(t, tb.tg.Owner, card, "Allow")
	tb.waitReply("Done. Last tool result")

	var code strings.Builder
	for i := range 300 {
		fmt.Fprintf(&code, "line %03d of the long reply\n", i)
	}
	tb.model.Script("SCN_TG_RL_LONG", fakemodel.Text("```\n"+code.String()+"```\n\nThe end of the long reply."))
	tb.say("SCN_TG_RL_LONG")
	tb.waitReply("The end of the long reply.")
	time.Sleep(3 * time.Second) // a doubled send would come now
	var got strings.Builder
	nCards := 0
	for _, m := range tb.tg.Messages(tb.tg.ChatID, tb.topic) {
		if m.From == nil || !m.From.IsBot {
			continue
		}
		if strings.Contains(m.Text, "touch rate-limited.txt") {
			nCards++
		}
		if strings.Contains(m.Text, "of the long reply") {
			got.WriteString(m.Text + "\n")
		}
	}
	if nCards != 1 {
		t.Fatalf("the card shows %d times", nCards)
	}
	last := -1
	for i := range 300 {
		line := fmt.Sprintf("line %03d of the long reply", i)
		if n := strings.Count(got.String(), line); n != 1 {
			t.Fatalf("%q appears %d times", line, n)
		}
		at := strings.Index(got.String(), line)
		if at < last {
			t.Fatalf("%q came out of order", line)
		}
		last = at
	}
	mu.Lock()
	defer mu.Unlock()
	if cards < 2 || parts < 3 {
		t.Fatalf("the 429s were not hit: %d card sends, %d part sends", cards, parts)
	}
}

// A /thread topic outlives a restart: Telegram keeps no list of a group's
// topics, so ccbridge's own record maps the topic back to its session,
// which resumes with its conversation.
func TestTelegramThreadTopicResumesAfterRestart(t *testing.T) {
	t.Parallel()
	tb := newTelegramBridge(t, "")
	tb.say("/thread long running\nremember the word pineapple")
	var topic int64
	if !tb.tg.WaitFor(long, func() bool {
		for _, tp := range tb.tg.Topics(tb.tg.ChatID) {
			if tp.Name == "long running" {
				topic = tp.MessageThreadID
			}
		}
		return topic != 0
	}) {
		t.Fatal("/thread opened no topic")
	}
	tb.waitIn(topic, "the thread's reply", func(m faketelegram.Message) bool { return strings.Contains(m.Text, "ok: remember the word pineapple") })
	sessions, err := tb.store.Sessions.List()
	if err != nil || len(sessions) != 1 {
		t.Fatalf("sessions %v, %v; want the thread's alone", sessions, err)
	}
	var key, before string
	for k, s := range sessions {
		key, before = k, s.ClaudeSessionID
	}
	deadline := time.Now().Add(long)
	for {
		if reg, _ := registry(t, tb.bridge).Sessions.Get(key); reg.ClaudeSessionID == before && before != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the conversation was never remembered")
		}
		time.Sleep(100 * time.Millisecond)
	}
	tb.kill()
	if err := tb.tmux.KillServer(t.Context()); err != nil {
		t.Fatal(err)
	}
	tb.start()
	tb.tg.OwnerText(topic, "what was the word?")
	r := tb.model.WaitRequest(t, long, "the resumed conversation", func(r fakemodel.Request) bool { return r.LastUserText == "what was the word?" })
	if body := fmt.Sprint(r.Body["messages"]); !strings.Contains(body, "remember the word pineapple") {
		t.Fatalf("the resumed request does not carry the earlier conversation: %.300s", body)
	}
	tb.waitIn(topic, "the reply after the restart", func(m faketelegram.Message) bool { return strings.Contains(m.Text, "ok: what was the word?") })
	if after, _ := tb.store.Sessions.Get(key); after.ClaudeSessionID != before || after.StartSource != "resume" {
		t.Fatalf("after restart: Claude session %s (source %q), want %s (resume)", after.ClaudeSessionID, after.StartSource, before)
	}
}

// Closing a /thread topic in the app stops its session, as archiving a
// Discord thread does; a message after it is reopened resumes it.
func TestTelegramClosingAThreadTopicStopsItsPane(t *testing.T) {
	t.Parallel()
	tb := newTelegramBridge(t, "")
	tb.say("/thread fix the parser\nlook at the parser")
	var topic int64
	if !tb.tg.WaitFor(long, func() bool {
		for _, tp := range tb.tg.Topics(tb.tg.ChatID) {
			if tp.Name == "fix the parser" {
				topic = tp.MessageThreadID
			}
		}
		return topic != 0
	}) {
		t.Fatal("/thread opened no topic")
	}
	tb.waitIn(topic, "the thread's reply", func(m faketelegram.Message) bool { return strings.Contains(m.Text, "ok: look at the parser") })
	if n := len(tb.panes()); n != 1 {
		t.Fatalf("%d panes, want the thread's", n)
	}
	if _, err := tb.tg.CloseTopicAs(tb.tg.Owner, topic); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(long)
	for len(tb.panes()) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the closed topic's pane is still running")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := tb.tg.ReopenTopicAs(tb.tg.Owner, topic); err != nil {
		t.Fatal(err)
	}
	tb.tg.OwnerText(topic, "back again")
	tb.waitIn(topic, "the reply after reopening", func(m faketelegram.Message) bool { return strings.Contains(m.Text, "ok: back again") })
}
