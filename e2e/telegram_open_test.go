//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/testutil/fakemodel"
	"github.com/ccbridge/ccbridge/internal/testutil/faketelegram"
)

// /open on Telegram (issue 27 §3, commands): every member of a group reads
// every topic, so an opened folder lives in a topic of the owner's private
// chat with the bot; the group hears only that it opened there.

// withTelegramOpenRoots restarts the bridge with open_roots = [root], root
// under the project's folder (Claude trusts the folders in it as it
// trusts the project), holding the folders alpha, alpha-two and beta.
func withTelegramOpenRoots(t *testing.T, tb *tgBridge) string {
	t.Helper()
	root := filepath.Join(tb.dir, "src")
	for _, d := range []string{"alpha", "alpha-two", "beta"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	owners := fmt.Sprintf("owner_ids = [\"%d\"]\n", tb.tg.Owner.ID)
	tb.bridge.stop()
	cfg, err := os.ReadFile(tb.cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg = []byte(strings.Replace(string(cfg), owners, owners+fmt.Sprintf("open_roots = [%q]\n", root), 1))
	if err := os.WriteFile(tb.cfg, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	tb.start()
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

// privateTopic waits for the topic named name in who's private chat.
func (tb *tgBridge) privateTopic(who faketelegram.User, name string) int64 {
	tb.t.Helper()
	var id int64
	if !tb.tg.WaitFor(long, func() bool {
		for _, tp := range tb.tg.Topics(who.ID) {
			if tp.Name == name {
				id = tp.MessageThreadID
			}
		}
		return id != 0
	}) {
		tb.t.Fatalf("no topic %q in %s's private chat: %+v", name, who.FirstName, tb.tg.Topics(who.ID))
	}
	return id
}

// waitPrivateIn waits for the bot's message in a topic of who's private
// chat that holds want.
func (tb *tgBridge) waitPrivateIn(who faketelegram.User, topic int64, want string) faketelegram.Message {
	tb.t.Helper()
	m, ok := tb.tg.WaitMessage(long, func(m faketelegram.Message) bool {
		return m.Chat.ID == who.ID && m.MessageThreadID == topic && m.From != nil && m.From.IsBot && !m.Deleted && strings.Contains(m.Text, want)
	})
	if !ok {
		var seen []string
		for _, c := range tb.tg.Calls() {
			if c.Params["chat_id"] == fmt.Sprint(who.ID) {
				seen = append(seen, fmt.Sprintf("%s %v %d %s", c.Method, c.Params, c.Status, c.Description))
			}
		}
		tb.t.Fatalf("no %q in the private topic %d; it holds:\n%s", want, topic, strings.Join(seen, "\n"))
	}
	return m
}

// /open alpha opens the folder in a new topic of the owner's private chat:
// the group's topic is told only that; the owner's message there reaches
// a Claude running in the folder, whose reply, receipt and typing come
// back there and nowhere else; /status works there, and /sessions in the
// group does not name it; after a restart the topic still reaches the
// same folder.
func TestTelegramOpenInAPrivateTopic(t *testing.T) {
	t.Parallel()
	tb := newTelegramBridge(t, "")
	root := withTelegramOpenRoots(t, tb)
	dir := filepath.Join(root, "alpha")
	tb.tg.SetPrivateTopics(true)
	tb.tg.StartBot(tb.tg.Owner)
	tb.say("/open alpha")
	said := tb.waitReply("📂 Opened")
	if strings.Contains(said.Text, dir) || !strings.Contains(said.Text, "private chat") {
		t.Fatalf("the group's word on /open: %q", said.Text)
	}
	owner := tb.tg.Owner
	topic := tb.privateTopic(owner, "alpha")
	tb.waitPrivateIn(owner, topic, "🟢 Claude is running in "+dir)
	sent := tb.tg.Inject(faketelegram.Incoming{ChatID: owner.ID, ThreadID: topic, Text: "hello from the private topic"})
	tb.waitPrivateIn(owner, topic, "ok: hello from the private topic")
	if !tb.tg.WaitFor(long, func() bool {
		m, _ := tb.tg.Message(owner.ID, sent.MessageID)
		return len(m.Reactions) > 0
	}) {
		t.Fatal("no receipt on the owner's message in the private topic")
	}
	typing := false
	for _, a := range tb.tg.ChatActions() {
		typing = typing || a.Action == "typing" && a.ChatID == owner.ID && a.ThreadID == topic
	}
	if !typing {
		t.Fatalf("no typing in the private topic: %+v", tb.tg.ChatActions())
	}
	if tb.groupSaw("hello from the private topic") || tb.groupSaw(dir) {
		t.Fatal("the group saw what the opened folder holds")
	}
	var cwd string
	sessions, _ := tb.store.Sessions.List()
	for _, s := range sessions {
		if s.Cwd == dir {
			cwd = s.Cwd
		}
	}
	if cwd == "" {
		t.Fatalf("no session runs in %s: %+v", dir, sessions)
	}
	tb.tg.Inject(faketelegram.Incoming{ChatID: owner.ID, ThreadID: topic, Text: "/status"})
	tb.waitPrivateIn(owner, topic, "alpha")
	tb.say("/sessions")
	if listed := tb.waitReply("Opened folders"); strings.Contains(listed.Text, "alpha") {
		t.Fatalf("/sessions in the group names the private folder: %q", listed.Text)
	}

	tb.bridge.stop()
	tb.start()
	tb.tg.Inject(faketelegram.Incoming{ChatID: owner.ID, ThreadID: topic, Text: "still there?"})
	tb.waitPrivateIn(owner, topic, "ok: still there?")
	if tb.groupSaw("still there?") {
		t.Fatal("the group saw the private topic's turn after the restart")
	}
}

// /open without a folder offers the folders under the roots as buttons,
// and /open with a part of a name the folders it matches: in the owner's
// private chat with the bot, never in the group, which learns no folder
// name. A pick there opens the one picked, in a topic of that chat.
// callback_data holds a short token, never the path. The private chat has
// the command menu, as the group has.
func TestTelegramOpenOffersFoldersAsButtons(t *testing.T) {
	t.Parallel()
	tb := newTelegramBridge(t, "")
	root := withTelegramOpenRoots(t, tb)
	tb.tg.SetPrivateTopics(true)
	owner := tb.tg.Owner
	tb.tg.StartBot(owner)
	picker := func(what string, pred func(faketelegram.Message) bool) faketelegram.Message {
		t.Helper()
		m, ok := tb.tg.WaitMessage(long, func(m faketelegram.Message) bool {
			return m.Chat.ID == owner.ID && m.MessageThreadID == 0 && m.From != nil && m.From.IsBot && m.ReplyMarkup != nil &&
				strings.Contains(m.Text, "folder") && pred(m)
		})
		if !ok {
			t.Fatalf("no %s in the owner's private chat: %+v", what, tb.tg.Messages(owner.ID, 0))
		}
		return m
	}
	tb.say("/open")
	all := picker("picker of every folder", func(faketelegram.Message) bool { return true })
	for _, name := range []string{"alpha", "alpha-two", "beta"} {
		button(t, all, name)
	}
	tb.say("/open alph")
	some := picker("picker of the matching folders", func(m faketelegram.Message) bool { return m.MessageID != all.MessageID })
	var labels []string
	for _, row := range some.ReplyMarkup.InlineKeyboard {
		for _, b := range row {
			labels = append(labels, b.Text)
			if strings.Contains(b.CallbackData, "alpha") || len(b.CallbackData) > 64 {
				t.Fatalf("callback_data %q carries the path", b.CallbackData)
			}
		}
	}
	if len(labels) != 2 || !strings.HasSuffix(labels[0], "/alpha") || !strings.HasSuffix(labels[1], "/alpha-two") {
		t.Fatalf("the folders matching alph: %q", labels)
	}
	for _, name := range []string{root, "alpha-two", "beta", "Which folder"} {
		if tb.groupSaw(name) {
			t.Fatalf("the group saw %q", name)
		}
	}
	if n := len(tb.panes()); n != 0 {
		t.Fatalf("%d panes before a folder was picked", n)
	}
	qid, err := tb.tg.Click(owner, owner.ID, some.MessageID, button(t, some, "alpha-two"))
	if err != nil {
		t.Fatal(err)
	}
	if !tb.tg.WaitFor(10*time.Second, func() bool { _, ok := tb.tg.Answered(qid); return ok }) {
		t.Fatal("the pick was never answered")
	}
	if _, ok := tb.tg.WaitMessage(long, func(m faketelegram.Message) bool {
		return m.Chat.ID == owner.ID && m.MessageID == some.MessageID && strings.Contains(m.Text, "📂 Opened") && m.ReplyMarkup == nil
	}); !ok {
		now, _ := tb.tg.Message(owner.ID, some.MessageID)
		t.Fatalf("the picker never said the folder opened: %+v", now)
	}
	topic := tb.privateTopic(owner, "alpha-two")
	tb.waitPrivateIn(owner, topic, "🟢 Claude is running in "+filepath.Join(root, "alpha-two"))
	if tb.groupSaw("alpha-two") {
		t.Fatal("the group saw the folder picked")
	}
	menu := func(chatID int64) []faketelegram.BotCommand { return tb.tg.Commands(fmt.Sprintf("chat:%d", chatID)) }
	if !tb.tg.WaitFor(10*time.Second, func() bool { return len(menu(owner.ID)) > 0 && len(menu(owner.ID)) == len(menu(tb.tg.ChatID)) }) {
		t.Fatalf("the owner's private chat's command menu %+v, the group's %+v", menu(owner.ID), menu(tb.tg.ChatID))
	}
}

// Without the bot's topic mode there is no private place for the folder:
// /open is refused in the group, saying how to turn it on, and nothing
// runs.
func TestTelegramOpenWithoutTopicModeSaysHowToEnable(t *testing.T) {
	t.Parallel()
	tb := newTelegramBridge(t, "")
	withTelegramOpenRoots(t, tb)
	tb.tg.StartBot(tb.tg.Owner)
	tb.say("/open alpha")
	refusal := tb.waitReply("Not opened")
	if !strings.Contains(refusal.Text, "BotFather") || !strings.Contains(refusal.Text, "Threaded Mode") || strings.Contains(refusal.Text, "Discord") {
		t.Fatalf("the refusal does not say how to turn topics on: %q", refusal.Text)
	}
	time.Sleep(time.Second)
	if n := len(tb.panes()); n != 0 {
		t.Fatalf("%d panes after a refused /open", n)
	}
	if ts := tb.tg.Topics(tb.tg.Owner.ID); len(ts) != 0 {
		t.Fatalf("topics opened: %+v", ts)
	}
}

// An owner who never started the bot has no private chat with it: /open
// is refused in the group, saying how to open the chat, and so is the
// folder picker, whose folder names the group never sees; once they have,
// /open works.
func TestTelegramOpenBeforeStartSaysHowToOpenTheChat(t *testing.T) {
	t.Parallel()
	tb := newTelegramBridge(t, "")
	root := withTelegramOpenRoots(t, tb)
	tb.tg.SetPrivateTopics(true)
	tb.say("/open")
	tb.waitReply("can't message you privately")
	for _, name := range []string{root, "alpha", "beta", "Which folder"} {
		if tb.groupSaw(name) {
			t.Fatalf("the group saw %q", name)
		}
	}
	tb.say("/open beta")
	refusal := tb.waitReply("Not opened")
	if !strings.Contains(refusal.Text, "press Start") || strings.Contains(refusal.Text, "Discord") {
		t.Fatalf("the refusal does not say how to open the private chat: %q", refusal.Text)
	}
	if n := len(tb.panes()); n != 0 {
		t.Fatalf("%d panes after a refused /open", n)
	}
	tb.tg.StartBot(tb.tg.Owner)
	tb.say("/open beta")
	tb.waitReply("📂 Opened")
	tb.privateTopic(tb.tg.Owner, "beta")
}

// An opened folder's permission card comes to its private topic, never to
// the group; the owner's Allow there runs the command.
func TestTelegramOpenedFolderCardInThePrivateTopic(t *testing.T) {
	t.Parallel()
	tb := newTelegramBridge(t, "")
	root := withTelegramOpenRoots(t, tb)
	tb.tg.SetPrivateTopics(true)
	tb.tg.StartBot(tb.tg.Owner)
	owner := tb.tg.Owner
	tb.say("/open beta")
	topic := tb.privateTopic(owner, "beta")
	tb.waitPrivateIn(owner, topic, "🟢 Claude is running")
	tb.model.Script("SCN_TG_OPEN_CARD", fakemodel.Tool("", "Bash", map[string]any{"command": "touch from-the-private-topic.txt", "description": "Make a file"}))
	tb.tg.Inject(faketelegram.Incoming{ChatID: owner.ID, ThreadID: topic, Text: "SCN_TG_OPEN_CARD"})
	card := tb.waitPrivateIn(owner, topic, "touch from-the-private-topic.txt")
	if card.ReplyMarkup == nil {
		t.Fatalf("the card has no buttons: %+v", card)
	}
	qid, err := tb.tg.Click(owner, owner.ID, card.MessageID, button(t, card, "Allow"))
	if err != nil {
		t.Fatal(err)
	}
	if !tb.tg.WaitFor(10*time.Second, func() bool { _, ok := tb.tg.Answered(qid); return ok }) {
		t.Fatal("the click was never answered")
	}
	tb.waitPrivateIn(owner, topic, "Done. Last tool result")
	if _, err := os.Stat(filepath.Join(root, "beta", "from-the-private-topic.txt")); err != nil {
		t.Fatal("the allowed command did not run")
	}
	if tb.groupSaw("from-the-private-topic") {
		t.Fatal("the group saw the opened folder's card")
	}
}
