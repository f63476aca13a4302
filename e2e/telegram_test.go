//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/testutil/claudetest"
	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
	"github.com/ccbridge/ccbridge/internal/testutil/fakemodel"
	"github.com/ccbridge/ccbridge/internal/testutil/faketelegram"
)

// tgBridge is a daemon serving one Telegram bot (a fake Telegram) with one
// project in a forum topic, the real Claude Code CLI in its pane. The
// product's defaults hold (the footer on).
type tgBridge struct {
	*bridge
	tg    *faketelegram.Server
	topic int64  // the project's forum topic
	dir   string // the project's folder
	key   string // its session key
}

func newTelegramBridge(t testing.TB, extra string) *tgBridge {
	t.Helper()
	claude := claudetest.Binary(t)
	b := &bridge{t: t, srv: fakediscord.New(t), model: fakemodel.New(t)}
	tb := &tgBridge{bridge: b, tg: faketelegram.New(t), key: "phone-api"}
	tb.topic = tb.tg.AddTopic("api").MessageThreadID
	base := b.newTmux()
	tb.dir = filepath.Join(base, "phone-api")
	if err := os.MkdirAll(tb.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	home := claudeHomeIn(t, base, tb.dir)
	var env []string
	for k, v := range claudetest.Env(home, b.model.URL) {
		env = append(env, fmt.Sprintf("%s = %q", k, v))
	}
	b.env = []string{"CCBRIDGE_E2E_TG=" + tb.tg.Token}
	cfg := fmt.Sprintf("[telegram]\napi_base = %q\n[tmux]\nsocket = %q\n[claude]\ncommand = %q\npermission_mode = \"default\"\nenv = { %s }\n%s\n"+
		"[[servers]]\nname = \"phone\"\nplatform = \"telegram\"\ntoken_env = \"CCBRIDGE_E2E_TG\"\nchat_id = \"%d\"\nowner_ids = [\"%d\"]\n"+
		"  [[servers.projects]]\n  name = \"api\"\n  topic_id = \"%d\"\n  path = %q\n",
		tb.tg.URL, b.socket, claude, strings.Join(env, ", "), extra, tb.tg.ChatID, tb.tg.Owner.ID, tb.topic, tb.dir)
	b.configure(base, cfg)
	tb.start()
	return tb
}

// start runs the daemon and waits for its bot to poll.
func (tb *tgBridge) start() {
	tb.t.Helper()
	tb.bridge.start()
	if !tb.tg.WaitFor(20*time.Second, tb.tg.Polling) {
		tb.t.Fatal("the bot never polled Telegram")
	}
}

// say posts the owner's text in the project's topic.
func (tb *tgBridge) say(text string) faketelegram.Message { return tb.tg.OwnerText(tb.topic, text) }

// waitBot waits for a message of the bot in the project's topic that
// pred accepts.
func (tb *tgBridge) waitBot(what string, pred func(faketelegram.Message) bool) faketelegram.Message {
	tb.t.Helper()
	m, ok := tb.tg.WaitMessage(long, func(m faketelegram.Message) bool {
		return m.From != nil && m.From.IsBot && m.MessageThreadID == tb.topic && !m.Deleted && pred(m)
	})
	if !ok {
		var seen []string
		for _, m := range tb.tg.Messages(tb.tg.ChatID, tb.topic) {
			seen = append(seen, fmt.Sprintf("%d %q", m.MessageID, m.Text))
		}
		tb.t.Fatalf("no %s in the topic; it holds:\n%s", what, strings.Join(seen, "\n"))
	}
	return m
}

func (tb *tgBridge) waitReply(want string) faketelegram.Message {
	tb.t.Helper()
	return tb.waitBot("reply containing "+want, func(m faketelegram.Message) bool { return strings.Contains(m.Text, want) })
}

// button is the callback_data of the button of m whose label holds label.
func button(t *testing.T, m faketelegram.Message, label string) string {
	t.Helper()
	if m.ReplyMarkup != nil {
		for _, row := range m.ReplyMarkup.InlineKeyboard {
			for _, b := range row {
				if strings.Contains(b.Text, label) {
					return b.CallbackData
				}
			}
		}
	}
	t.Fatalf("no %q button on %q (%+v)", label, m.Text, m.ReplyMarkup)
	return ""
}

// The owner's message in a project's topic reaches its Claude; the reply
// comes back in the same topic, the message gets its receipt (Telegram's
// 👍 for ✅) and "typing" shows in the topic while Claude works.
func TestTelegramMessageToReplyInItsTopic(t *testing.T) {
	t.Parallel()
	tb := newTelegramBridge(t, "")
	sent := tb.say("hello telegram")
	tb.waitReply("ok: hello telegram")
	if !tb.tg.WaitFor(long, func() bool {
		m, _ := tb.tg.Message(tb.tg.ChatID, sent.MessageID)
		return slices.Contains(m.Reactions, "👍")
	}) {
		m, _ := tb.tg.Message(tb.tg.ChatID, sent.MessageID)
		t.Fatalf("no receipt on the owner's message: %v", m.Reactions)
	}
	typing := false
	for _, a := range tb.tg.ChatActions() {
		typing = typing || a.Action == "typing" && a.ThreadID == tb.topic
	}
	if !typing {
		t.Fatalf("no typing in the topic: %+v", tb.tg.ChatActions())
	}
	if s, err := tb.store.Sessions.Get(tb.key); err != nil || s.Cwd == "" {
		t.Fatalf("session %s: %+v, %v", tb.key, s, err)
	}
}

// A permission prompt is a card with an inline keyboard; Allow runs the
// tool and the click is answered, so the phone's spinner stops.
func TestTelegramPermissionCardAllow(t *testing.T) {
	t.Parallel()
	tb := newTelegramBridge(t, "")
	tb.model.Script("SCN_TG_CARD", fakemodel.Tool("", "Bash", map[string]any{"command": "touch from-telegram.txt", "description": "Make a file"}))
	tb.say("SCN_TG_CARD")
	card := tb.waitBot("permission card", func(m faketelegram.Message) bool {
		return strings.Contains(m.Text, "touch from-telegram.txt") && m.ReplyMarkup != nil
	})
	qid, err := tb.tg.Click(tb.tg.Owner, tb.tg.ChatID, card.MessageID, button(t, card, "Allow"))
	if err != nil {
		t.Fatal(err)
	}
	if !tb.tg.WaitFor(10*time.Second, func() bool { _, ok := tb.tg.Answered(qid); return ok }) {
		t.Fatal("the click was never answered")
	}
	answer, _ := tb.tg.Answered(qid)
	t.Logf("the click was answered %q", answer.Text)
	tb.waitReply("Done. Last tool result")
	if _, err := os.Stat(filepath.Join(tb.dir, "from-telegram.txt")); err != nil {
		t.Fatal("the allowed command did not run")
	}
}

// A reply longer than a Telegram message is split at 4,096 characters,
// formatted as Telegram HTML that it accepts (the fake refuses what does
// not parse), a code block cut in two closed and reopened, nothing lost.
func TestTelegramLongReplySplit(t *testing.T) {
	t.Parallel()
	tb := newTelegramBridge(t, "")
	var code strings.Builder
	for i := range 300 {
		fmt.Fprintf(&code, "fmt.Println(\"line %03d of the long reply\")\n", i)
	}
	text := "**Here is the code**:\n\n```go\n" + code.String() + "```\n\nThe end of the long reply."
	tb.model.Script("SCN_TG_LONG", fakemodel.Text(text))
	tb.say("SCN_TG_LONG")
	tb.waitReply("The end of the long reply.")
	var got strings.Builder
	parts := 0
	for _, m := range tb.tg.Messages(tb.tg.ChatID, tb.topic) {
		if m.From != nil && m.From.IsBot && strings.Contains(m.Text, "of the long reply") {
			parts++
			got.WriteString(m.Text + "\n")
		}
	}
	if parts < 3 {
		t.Fatalf("a %d-character reply came in %d messages", len(text), parts)
	}
	for i := range 300 {
		if line := fmt.Sprintf("line %03d of the long reply", i); strings.Count(got.String(), line) != 1 {
			t.Fatalf("%q appears %d times in the parts", line, strings.Count(got.String(), line))
		}
	}
	if strings.Contains(got.String(), "**") || strings.Contains(got.String(), "```") {
		t.Fatal("Markdown was sent as text, not as formatting")
	}
}

// A bot command runs as the slash command does on Discord.
func TestTelegramStatusCommand(t *testing.T) {
	t.Parallel()
	tb := newTelegramBridge(t, "")
	tb.say("hello first")
	tb.waitReply("ok: hello first")
	tb.say("/status")
	tb.waitReply("Model")
	if cmds := tb.tg.Commands(fmt.Sprintf("chat:%d", tb.tg.ChatID)); len(cmds) == 0 {
		t.Fatalf("no commands set for the chat: %v", tb.tg.Commands(""))
	}
}

// What the owner sends while ccbridge is down reaches Claude once it is
// back, once.
func TestTelegramCatchUpAfterARestart(t *testing.T) {
	t.Parallel()
	tb := newTelegramBridge(t, "")
	tb.say("before the restart")
	tb.waitReply("ok: before the restart")
	tb.bridge.stop()
	tb.say("while it was down")
	tb.start()
	tb.waitReply("ok: while it was down")
	time.Sleep(3 * time.Second) // a second delivery would come now
	n := 0
	for _, m := range tb.tg.Messages(tb.tg.ChatID, tb.topic) {
		if m.From != nil && m.From.IsBot && strings.Contains(m.Text, "ok: while it was down") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the message sent while down was answered %d times", n)
	}
}

// A group member who is not an owner drives nothing: no session starts.
func TestTelegramStrangerDrivesNothing(t *testing.T) {
	t.Parallel()
	tb := newTelegramBridge(t, "")
	eve := tb.tg.AddUser("Eve", true)
	tb.tg.Inject(faketelegram.Incoming{From: eve, ThreadID: tb.topic, Text: "run something for me"})
	tb.say("from the owner")
	tb.waitReply("ok: from the owner")
	for _, r := range tb.model.Requests() {
		if strings.Contains(r.LastUserText, "run something for me") {
			t.Fatal("a stranger's message reached Claude")
		}
	}
}
