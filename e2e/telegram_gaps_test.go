//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/testutil/fakemodel"
	"github.com/ccbridge/ccbridge/internal/testutil/faketelegram"
)

// Issue 27 §3, what a Telegram user meets beyond the table's first pass:
// answers for one person, forms across a restart.

// waitPrivate waits for the bot's message in who's private chat that
// holds want (in its text or a link's URL).
func (tb *tgBridge) waitPrivate(who faketelegram.User, want string) faketelegram.Message {
	tb.t.Helper()
	m, ok := tb.tg.WaitMessage(long, func(m faketelegram.Message) bool {
		return m.Chat.ID == who.ID && m.From != nil && m.From.IsBot && strings.Contains(m.Text+linksOf(m), want)
	})
	if !ok {
		tb.t.Fatalf("no %q in %s's private chat: %+v", want, who.FirstName, tb.tg.Messages(who.ID, 0))
	}
	return m
}

func linksOf(m faketelegram.Message) string {
	var b strings.Builder
	for _, e := range m.Entities {
		b.WriteString(" " + e.URL)
	}
	return b.String()
}

// groupSaw reports whether any call to the group carried what.
func (tb *tgBridge) groupSaw(what string) bool {
	group := strconv.FormatInt(tb.tg.ChatID, 10)
	for _, c := range tb.tg.Calls() {
		if c.Params["chat_id"] == group && strings.Contains(c.Params["text"]+c.Params["reply_markup"]+c.Params["caption"], what) {
			return true
		}
	}
	return false
}

// /web's link is a capability to read the session: it is never posted in
// the group, which every member reads. It reaches the owner in their
// private chat with the bot; before they have started it, the topic hears
// only how to open it.
func TestTelegramWebLinkOnlyInPrivate(t *testing.T) {
	t.Parallel()
	tb := newTelegramBridge(t, fmt.Sprintf("[web]\nlisten = \"127.0.0.1:%d\"\n", freePort(t)))
	tb.say("hello web")
	tb.waitReply("ok: hello web")
	cmd := tb.say("/web")
	line := tb.waitReply("can't message you privately")
	if line.ReplyToMessage == nil || line.ReplyToMessage.MessageID != cmd.MessageID || strings.Contains(line.Text, "http") {
		t.Fatalf("the line in the topic: %q (replying to %+v)", line.Text, line.ReplyToMessage)
	}
	tb.tg.StartBot(tb.tg.Owner)
	tb.waitPrivate(tb.tg.Owner, "I can now answer you here")
	tb.say("/web")
	answer := tb.waitPrivate(tb.tg.Owner, "in the browser")
	link := ""
	for _, e := range answer.Entities {
		if strings.HasPrefix(e.URL, "http://127.0.0.1:") {
			link = e.URL
		}
	}
	if link == "" {
		t.Fatalf("the private answer has no link: %q %+v", answer.Text, answer.Entities)
	}
	resp, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the link answers %d", resp.StatusCode)
	}
	if tb.groupSaw(link) || tb.groupSaw(strings.TrimPrefix(link, "http://")) {
		t.Fatal("the group was shown the link")
	}
}

// A form waiting for its answer (deny with instructions) outlives a
// restart of the daemon: the owner's reply after it is what Claude gets.
func TestTelegramFormAnsweredAfterARestart(t *testing.T) {
	t.Parallel()
	tb := newTelegramBridge(t, "")
	tb.model.Script("SCN_TG_FORM_RESTART", fakemodel.Tool("", "Bash", map[string]any{"command": "touch kept.txt", "description": "Touch it"}))
	tb.say("SCN_TG_FORM_RESTART")
	card := tb.waitBot("the card", func(m faketelegram.Message) bool {
		return strings.Contains(m.Text, "touch kept.txt") && m.ReplyMarkup != nil
	})
	tb.click(t, tb.tg.Owner, card, "Deny with instructions")
	prompt := tb.waitBot("the form", func(m faketelegram.Message) bool {
		return m.ForceReply && strings.Contains(m.Text, "What should Claude do instead")
	})
	tb.bridge.stop()
	tb.start()
	if _, err := tb.tg.ForceReplyAnswer(tb.tg.Owner, tb.tg.ChatID, prompt.MessageID, "use echo instead"); err != nil {
		t.Fatal(err)
	}
	tb.waitCardText(card.MessageID, "Denied by")
	r := tb.model.WaitRequest(t, long, "the denial", func(r fakemodel.Request) bool { return len(r.ToolResults) == 1 })
	if got := r.ToolResults[0]; got.Content != "use echo instead" || !got.IsError {
		t.Fatalf("tool_result = %+v", got)
	}
	if _, err := os.Stat(filepath.Join(tb.dir, "kept.txt")); err == nil {
		t.Fatal("the denied command ran")
	}
}
