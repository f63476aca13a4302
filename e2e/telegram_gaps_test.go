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

	"github.com/ccbridge/ccbridge/internal/audit"
	"github.com/ccbridge/ccbridge/internal/router"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/telegram"
	"github.com/ccbridge/ccbridge/internal/testutil/fakemodel"
	"github.com/ccbridge/ccbridge/internal/testutil/faketelegram"
)

// Issue 27 §3, the rows telegram_test.go and telegram_rows_test.go left
// without a scenario: answers for one person and the group's commands,
// forms across a restart, stale clicks and Always with its scope, the
// control panel and attention pings, policy, audit and redaction.

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
	// Every command Telegram can take is the group's (setMyCommands scoped
	// to the chat), /web among them.
	set := map[string]bool{}
	for _, c := range tb.tg.Commands(fmt.Sprintf("chat:%d", tb.tg.ChatID)) {
		set[c.Command] = true
	}
	for _, spec := range router.Commands() {
		if name, ok := telegram.CommandName(spec.Name); ok && !set[name] {
			t.Errorf("/%s is not among the chat's commands %v", name, set)
		}
	}
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

// Binding and stale clicks, and Always with its scope, on one card each:
// a second Allow on a card already answered (two quick taps) is answered,
// to the clicker alone, and runs nothing twice; "Always…" offers its rules
// as buttons, and the one picked is saved where it says, so the next
// identical call raises no card.
func TestTelegramStaleClickAndAlwaysWithScope(t *testing.T) {
	t.Parallel()
	tb := newTelegramBridge(t, "")
	tb.model.Script("SCN_TG_TWICE", fakemodel.Tool("", "Bash", map[string]any{"command": "echo once >> twice.txt", "description": "Append"}))
	tb.say("SCN_TG_TWICE")
	card := tb.waitBot("the card", func(m faketelegram.Message) bool {
		return strings.Contains(m.Text, "twice.txt") && m.ReplyMarkup != nil
	})
	allow := button(t, card, "Allow")
	first, err := tb.tg.Click(tb.tg.Owner, tb.tg.ChatID, card.MessageID, allow)
	if err != nil {
		t.Fatal(err)
	}
	second, err := tb.tg.Click(tb.tg.Owner, tb.tg.ChatID, card.MessageID, allow)
	if err != nil {
		t.Fatal(err)
	}
	tb.waitReply("Done. Last tool result")
	var late faketelegram.Answer
	if !tb.tg.WaitFor(long, func() bool { var ok bool; late, ok = tb.tg.Answered(second); return ok }) {
		t.Fatal("the second tap was never answered")
	}
	if _, ok := tb.tg.Answered(first); !ok {
		t.Fatal("the first tap was never answered")
	}
	for _, said := range []string{late.Text, "no longer", "answered already"} {
		if said != "" && tb.groupSaw(said) {
			t.Fatalf("the group was told of the second tap: %q", said)
		}
	}
	if raw, _ := os.ReadFile(filepath.Join(tb.dir, "twice.txt")); string(raw) != "once\n" {
		t.Fatalf("twice.txt = %q", raw)
	}

	npm := map[string]any{"command": "npm test -- --watch=false", "description": "Run tests"}
	tb.model.Script("SCN_TG_NPM", fakemodel.Tool("", "Bash", npm), fakemodel.Tool("", "Bash", npm))
	tb.say("SCN_TG_NPM")
	card = tb.waitBot("the npm card", func(m faketelegram.Message) bool { return strings.Contains(m.Text, "npm test") && m.ReplyMarkup != nil })
	tb.click(t, tb.tg.Owner, card, "Always…")
	menu, ok := tb.tg.WaitMessage(long, func(m faketelegram.Message) bool {
		return m.MessageID == card.MessageID && m.Chat.ID == tb.tg.ChatID && m.ReplyMarkup != nil && strings.Contains(fmt.Sprint(m.ReplyMarkup), "this project, just me")
	})
	if !ok {
		now, _ := tb.tg.Message(tb.tg.ChatID, card.MessageID)
		t.Fatalf("no Always menu: %+v", now.ReplyMarkup)
	}
	tb.click(t, tb.tg.Owner, menu, "Bash(npm test *) — this project, just me")
	tb.waitCardText(card.MessageID, "this project, just me")
	npmCard := card.MessageID
	tb.waitBot("the npm turn's reply", func(m faketelegram.Message) bool {
		return m.MessageID > npmCard && strings.Contains(m.Text, "Done. Last tool result:")
	})
	raw, err := os.ReadFile(filepath.Join(tb.dir, ".claude", "settings.local.json"))
	if err != nil || !strings.Contains(string(raw), `Bash(npm test *)`) {
		t.Fatalf("settings.local.json = %s, %v", raw, err)
	}
	cards := 0
	for _, m := range tb.tg.Messages(tb.tg.ChatID, tb.topic) {
		if m.From != nil && m.From.IsBot && strings.Contains(m.Text, "npm test") && strings.Contains(m.Text, "wants to run") {
			cards++
		}
	}
	if cards != 1 {
		t.Fatalf("%d npm cards; the second identical call should raise none", cards)
	}
}

// The control panel is in the General topic and drives the project's
// session; a card left unanswered past attention_after mentions the owner
// (a mention by id, which notifies them), once.
func TestTelegramPanelAndAttentionPing(t *testing.T) {
	t.Parallel()
	tb := newTelegramBridge(t, "")
	tb.bridge.stop()
	cfg, _ := os.ReadFile(tb.cfg)
	path := fmt.Sprintf("  path = %q\n", tb.dir)
	cfg = []byte(strings.Replace(string(cfg), path, path+"  footer = \"off\"\n  attention_after = \"3s\"\n", 1))
	if err := os.WriteFile(tb.cfg, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	tb.start()
	// The panel this daemon keeps (the one stopped at once, before, may
	// have left one of its own).
	var shown int64
	waitUntil(t, long, "the control panel", func() bool {
		reg, err := state.OpenRegistry(filepath.Join(tb.stateDir, "ccbridge"))
		if err != nil {
			return false
		}
		rec, err := reg.Panels.Get("phone")
		if err != nil {
			return false
		}
		_, shown, err = telegram.ParseMessage(rec.MessageID)
		return err == nil
	})
	panel := tb.waitIn(0, "the panel", func(m faketelegram.Message) bool {
		return m.MessageID == shown && m.ReplyMarkup != nil && strings.Contains(m.Text, "⚪ stopped")
	})
	tb.click(t, tb.tg.Owner, panel, "Start api")
	tb.waitIn(0, "the panel after Start", func(m faketelegram.Message) bool {
		return m.MessageID == panel.MessageID && strings.Contains(m.Text, "🟢 running")
	})
	waitUntil(t, long, "the session started from the panel", func() bool { return len(tb.panes()) == 1 })

	tb.model.Script("SCN_TG_WAIT", fakemodel.Tool("", "Bash", map[string]any{"command": "touch waited.txt", "description": "Create waited.txt"}))
	tb.say("SCN_TG_WAIT")
	card := tb.waitBot("the card", func(m faketelegram.Message) bool {
		return strings.Contains(m.Text, "touch waited.txt") && m.ReplyMarkup != nil
	})
	ping := tb.waitReply("for your answer on the card above")
	owner := fmt.Sprintf("tg://user?id=%d", tb.tg.Owner.ID)
	mentions := 0
	for _, e := range ping.Entities {
		if e.Type == "text_link" && strings.HasPrefix(e.URL, "tg://user") {
			mentions++
			if e.URL != owner {
				t.Errorf("the ping mentions %s", e.URL)
			}
		}
	}
	if mentions != 1 {
		t.Errorf("the ping %q mentions %d people, want the owner", ping.Text, mentions)
	}
	tb.click(t, tb.tg.Owner, card, "Allow")
	tb.waitReply("Done. Last tool result")
	pings := 0
	for _, m := range tb.tg.Messages(tb.tg.ChatID, tb.topic) {
		if strings.Contains(m.Text, "for your answer on the card above") {
			pings++
		}
	}
	if pings != 1 {
		t.Errorf("%d pings, want 1", pings)
	}
}

// Policy, audit and redaction hold on Telegram as on Discord: a reply that
// quotes a token reaches Telegram masked (no call carries it); a deny rule
// refuses a command without a card; an owner's Allow from Telegram is in
// the audit log as that owner's.
func TestTelegramPolicyAuditRedaction(t *testing.T) {
	t.Parallel()
	tb := newTelegramBridge(t, policyTOML)
	token := "ghp_" + strings.Repeat("Zq9Xw8Ve7U", 4)[:36]
	tb.model.Script("SCN_TG_SECRET", fakemodel.Text("Your token is "+token+" — keep it safe."))
	tb.say("SCN_TG_SECRET")
	if m := tb.waitReply("Your token is"); !strings.Contains(m.Text, "[redacted GitHub token]") {
		t.Fatalf("reply not masked: %q", m.Text)
	}
	for _, c := range tb.tg.Calls() {
		if strings.Contains(fmt.Sprint(c.Params), token) {
			t.Fatalf("the token reached Telegram: %s %v", c.Method, c.Params)
		}
	}

	tb.model.Script("SCN_TG_DENY_RULE", fakemodel.Tool("", "Bash", map[string]any{"command": "echo cleaning && rm -rf build", "description": "Clean"}))
	tb.say("SCN_TG_DENY_RULE")
	tb.waitReply("ccbridge policy: denied by rule Bash(rm -rf *)")
	for _, m := range tb.tg.Messages(tb.tg.ChatID, tb.topic) {
		if strings.Contains(m.Text, "rm -rf build") && m.ReplyMarkup != nil {
			t.Fatalf("a denied call got a card: %q", m.Text)
		}
	}

	tb.model.Script("SCN_TG_AUDIT", fakemodel.Tool("", "Bash", map[string]any{"command": "touch audited.txt", "description": "Touch"}))
	tb.say("SCN_TG_AUDIT")
	card := tb.waitBot("the card", func(m faketelegram.Message) bool {
		return strings.Contains(m.Text, "touch audited.txt") && m.ReplyMarkup != nil
	})
	tb.click(t, tb.tg.Owner, card, "Allow")
	owner := strconv.FormatInt(tb.tg.Owner.ID, 10)
	tb.waitAudit("the Telegram Allow", func(e audit.Entry) bool {
		return e.Answer == "allow" && e.From == audit.FromTelegram && e.Who == owner && strings.Contains(e.Asked, "touch audited.txt")
	})
}
