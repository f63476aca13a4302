package faketelegram

import (
	"strconv"
	"strings"
	"testing"
)

// A bot may message a person privately only once they have started it:
// before, Telegram answers 403; a person it has never seen is 400.
func TestPrivateChatNeedsStart(t *testing.T) {
	s := New(t)
	alice := s.AddUser("Alice", true)
	r := call(t, s, "sendMessage", map[string]any{"chat_id": alice.ID, "text": "a secret link"})
	if r.OK || r.Status != 403 || r.ErrorCode != 403 || r.Description != "Forbidden: bot can't initiate conversation with a user" {
		t.Fatalf("before /start: %+v", r)
	}
	if got := s.Messages(alice.ID, 0); len(got) != 0 {
		t.Fatalf("a chat not started shows %+v", got)
	}
	if r := call(t, s, "sendMessage", map[string]any{"chat_id": 987654321, "text": "hello"}); r.Status != 400 || r.Description != "Bad Request: chat not found" {
		t.Fatalf("unknown person: %+v", r)
	}
	start := s.StartBot(alice)
	if start.Chat.ID != alice.ID || start.Chat.Type != "private" || start.Text != "/start" || len(start.Entities) != 1 {
		t.Fatalf("/start: %+v", start)
	}
	send(t, s, map[string]any{"chat_id": alice.ID, "text": "a secret link"})
	got := s.Messages(alice.ID, 0)
	if len(got) != 2 || got[1].Text != "a secret link" || got[1].From.ID != s.Bot.ID {
		t.Fatalf("private chat shows %+v", got)
	}
	// A topic has no meaning in a private chat; the group never saw it.
	for _, m := range s.Messages(s.ChatID, 0) {
		if strings.Contains(m.Text, "secret") {
			t.Fatalf("the group shows %+v", m)
		}
	}
	s.BlockBot(alice)
	if r := call(t, s, "sendMessage", map[string]any{"chat_id": alice.ID, "text": "again"}); r.Status != 403 || r.Description != "Forbidden: bot was blocked by the user" {
		t.Fatalf("blocked: %+v", r)
	}
}

// A private chat's command menu (scope chat:<person>) is refused as a send
// there is until the person has started the bot.
func TestPrivateChatCommandScopeNeedsStart(t *testing.T) {
	s := New(t)
	alice := s.AddUser("Alice", true)
	cmds := []BotCommand{{Command: "open", Description: "open a folder"}}
	scope := map[string]any{"type": "chat", "chat_id": alice.ID}
	refused(t, s, "setMyCommands", map[string]any{"commands": cmds, "scope": scope}, 403, "Forbidden: bot can't initiate conversation with a user")
	if c := s.Commands("chat:" + strconv.FormatInt(alice.ID, 10)); len(c) != 0 {
		t.Fatalf("a chat not started has a menu: %+v", c)
	}
	s.StartBot(alice)
	ok(t, s, "setMyCommands", map[string]any{"commands": cmds, "scope": scope}, nil)
	if c := s.Commands("chat:" + strconv.FormatInt(alice.ID, 10)); len(c) != 1 || c[0].Command != "open" {
		t.Fatalf("the private chat's menu: %+v", c)
	}
}
