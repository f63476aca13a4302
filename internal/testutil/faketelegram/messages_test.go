package faketelegram

import (
	"strings"
	"testing"
	"time"
)

// 4,096 is counted in UTF-16 code units after parsing: markup does not
// count, an emoji outside the BMP counts twice.
func TestTextLength(t *testing.T) {
	s := New(t)
	send(t, s, map[string]any{"text": strings.Repeat("a", 4096)})
	send(t, s, map[string]any{"text": "<b>" + strings.Repeat("a", 4096) + "</b>", "parse_mode": "HTML"})
	send(t, s, map[string]any{"text": strings.Repeat("😀", 2048)})
	refused(t, s, "sendMessage", map[string]any{"chat_id": s.ChatID, "text": strings.Repeat("a", 4097)}, 400, "Bad Request: message is too long")
	refused(t, s, "sendMessage", map[string]any{"chat_id": s.ChatID, "text": strings.Repeat("😀", 2048) + "a"}, 400, "Bad Request: message is too long")
	refused(t, s, "sendMessage", map[string]any{"chat_id": s.ChatID, "text": "<b> </b>", "parse_mode": "HTML"}, 400, "Bad Request: message text is empty")
	m := send(t, s, map[string]any{"text": "first"})
	refused(t, s, "editMessageText", map[string]any{"chat_id": s.ChatID, "message_id": m.MessageID, "text": strings.Repeat("a", 4097)}, 400, "Bad Request: message is too long")
}

func TestCaptionLength(t *testing.T) {
	s := New(t)
	doc := sentDocument(t, s, "a.txt", []byte("x"), "")
	ok(t, s, "sendDocument", map[string]any{"chat_id": s.ChatID, "document": doc.FileID, "caption": strings.Repeat("c", 1024)}, nil)
	refused(t, s, "sendDocument", map[string]any{"chat_id": s.ChatID, "document": doc.FileID, "caption": strings.Repeat("c", 1025)}, 400,
		"Bad Request: message caption is too long")
}

func TestInlineKeyboardRules(t *testing.T) {
	s := New(t)
	send(t, s, map[string]any{"text": "k", "reply_markup": keyboard([]map[string]any{cb("Go", strings.Repeat("d", 64))})})
	// 64 bytes, not characters: 22 three-byte runes are 66 bytes.
	refused(t, s, "sendMessage", map[string]any{"chat_id": s.ChatID, "text": "k",
		"reply_markup": keyboard([]map[string]any{cb("Go", strings.Repeat("€", 22))})}, 400, "Bad Request: BUTTON_DATA_INVALID")
	refused(t, s, "sendMessage", map[string]any{"chat_id": s.ChatID, "text": "k",
		"reply_markup": keyboard([]map[string]any{cb("Go", strings.Repeat("d", 65))})}, 400, "Bad Request: BUTTON_DATA_INVALID")
	refused(t, s, "sendMessage", map[string]any{"chat_id": s.ChatID, "text": "k",
		"reply_markup": keyboard([]map[string]any{cb("Go", "")})}, 400, "Bad Request: BUTTON_DATA_INVALID")
	refused(t, s, "sendMessage", map[string]any{"chat_id": s.ChatID, "text": "k",
		"reply_markup": keyboard([]map[string]any{{"text": "no action", "style": "danger"}})}, 400,
		"Bad Request: can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard")
	refused(t, s, "sendMessage", map[string]any{"chat_id": s.ChatID, "text": "k",
		"reply_markup": keyboard([]map[string]any{{"text": "two", "callback_data": "a", "url": "https://x.test"}})}, 400,
		"Bad Request: can't parse inline keyboard button: exactly one of the fields other than text, icon_custom_emoji_id and style must be used")
}

func TestReactions(t *testing.T) {
	s := New(t)
	in := s.OwnerText(0, "hello")
	react := func(r ...string) map[string]any {
		var list []any
		for _, e := range r {
			list = append(list, map[string]any{"type": "emoji", "emoji": e})
		}
		return map[string]any{"chat_id": s.ChatID, "message_id": in.MessageID, "reaction": list}
	}
	ok(t, s, "setMessageReaction", react("👀"), nil)
	if m, _ := s.Message(s.ChatID, in.MessageID); len(m.Reactions) != 1 || m.Reactions[0] != "👀" {
		t.Fatalf("reactions %q", m.Reactions)
	}
	refused(t, s, "setMessageReaction", react("✅"), 400, "Bad Request: REACTION_INVALID")
	refused(t, s, "setMessageReaction", react("👍", "🔥"), 400, "Bad Request: REACTIONS_TOO_MANY")
	refused(t, s, "setMessageReaction", map[string]any{"chat_id": s.ChatID, "message_id": in.MessageID,
		"reaction": []any{map[string]any{"type": "paid"}}}, 400, "Bad Request: REACTION_INVALID")
	ok(t, s, "setMessageReaction", map[string]any{"chat_id": s.ChatID, "message_id": in.MessageID}, nil)
	if m, _ := s.Message(s.ChatID, in.MessageID); len(m.Reactions) != 0 {
		t.Fatalf("reactions not cleared: %q", m.Reactions)
	}
}

func TestEdits(t *testing.T) {
	s := New(t)
	kb := keyboard([]map[string]any{cb("Allow", "a:1"), cb("Deny", "d:1")})
	m := send(t, s, map[string]any{"text": "card", "reply_markup": kb})
	var e Message
	ok(t, s, "editMessageText", map[string]any{"chat_id": s.ChatID, "message_id": m.MessageID, "text": "card 2", "reply_markup": kb}, nil)
	s.RefusalsExpected.Store(true)
	r := call(t, s, "editMessageText", map[string]any{"chat_id": s.ChatID, "message_id": m.MessageID, "text": "<i>card 2</i>", "reply_markup": kb, "parse_mode": "MarkdownV2"})
	if r.Status != 400 || !strings.HasPrefix(r.Description, "Bad Request: can't parse entities") {
		t.Fatalf("MarkdownV2 with HTML: %d %s", r.Status, r.Description)
	}
	r = call(t, s, "editMessageText", map[string]any{"chat_id": s.ChatID, "message_id": m.MessageID, "text": "card 2", "reply_markup": kb})
	if r.Status != 400 || r.Description != "Bad Request: "+notModified {
		t.Fatalf("unchanged edit: %d %s", r.Status, r.Description)
	}
	s.RefusalsExpected.Store(false)
	// An edit without reply_markup drops the keyboard.
	ok(t, s, "editMessageText", map[string]any{"chat_id": s.ChatID, "message_id": m.MessageID, "text": "<b>Allowed</b>", "parse_mode": "HTML"}, &e)
	got, _ := s.Message(s.ChatID, m.MessageID)
	if got.Text != "Allowed" || got.ReplyMarkup != nil || len(got.Entities) != 1 || e.EditDate == 0 {
		t.Fatalf("after the edit: %+v", got)
	}
	if len(got.Edits) != 2 || got.Edits[0] != "card" || got.Edits[1] != "card 2" {
		t.Fatalf("edits %q", got.Edits)
	}
	ok(t, s, "editMessageReplyMarkup", map[string]any{"chat_id": s.ChatID, "message_id": m.MessageID, "reply_markup": kb}, nil)
	if got, _ := s.Message(s.ChatID, m.MessageID); got.ReplyMarkup == nil || got.ReplyMarkup.InlineKeyboard[0][1].CallbackData != "d:1" {
		t.Fatalf("keyboard not back: %+v", got.ReplyMarkup)
	}
	ok(t, s, "editMessageReplyMarkup", map[string]any{"chat_id": s.ChatID, "message_id": m.MessageID}, nil)
	if got, _ := s.Message(s.ChatID, m.MessageID); got.ReplyMarkup != nil {
		t.Fatal("keyboard not removed")
	}
	refused(t, s, "editMessageText", map[string]any{"chat_id": s.ChatID, "message_id": 999, "text": "x"}, 400, "Bad Request: message to edit not found")
	in := s.OwnerText(0, "mine")
	refused(t, s, "editMessageText", map[string]any{"chat_id": s.ChatID, "message_id": in.MessageID, "text": "x"}, 400, "Bad Request: message can't be edited")
}

func TestDeleteMessage(t *testing.T) {
	s := New(t)
	m := send(t, s, map[string]any{"text": "bye"})
	ok(t, s, "deleteMessage", map[string]any{"chat_id": s.ChatID, "message_id": m.MessageID}, nil)
	if got := s.Messages(s.ChatID, 0); len(got) != 0 {
		t.Fatalf("chat still shows %+v", got)
	}
	if got, _ := s.Message(s.ChatID, m.MessageID); !got.Deleted {
		t.Fatal("not marked deleted")
	}
	refused(t, s, "deleteMessage", map[string]any{"chat_id": s.ChatID, "message_id": m.MessageID}, 400, "Bad Request: message to delete not found")
}

func TestCallbackQueries(t *testing.T) {
	s := New(t)
	m := send(t, s, map[string]any{"text": "card", "reply_markup": keyboard([]map[string]any{cb("Allow", "a:1")})})
	if _, err := s.Click(s.Owner, s.ChatID, m.MessageID, "nope"); err == nil {
		t.Fatal("a click on a button the message does not show was injected")
	}
	id, err := s.Click(s.Owner, s.ChatID, m.MessageID, "a:1")
	if err != nil {
		t.Fatal(err)
	}
	ok(t, s, "answerCallbackQuery", map[string]any{"callback_query_id": id, "text": "Allowed"}, nil)
	if a, ok := s.Answered(id); !ok || a.Text != "Allowed" {
		t.Fatalf("answer %+v %v", a, ok)
	}
	const tooOld = "Bad Request: query is too old and response timeout expired or query ID is invalid"
	refused(t, s, "answerCallbackQuery", map[string]any{"callback_query_id": id}, 400, tooOld)
	refused(t, s, "answerCallbackQuery", map[string]any{"callback_query_id": "123"}, 400, tooOld)
	refused(t, s, "answerCallbackQuery", map[string]any{"callback_query_id": id, "text": strings.Repeat("x", 201)}, 400, "Bad Request: MESSAGE_TOO_LONG")

	// A query answered after its lifetime is refused.
	s2 := New(t)
	s2.CallbackQueryTTL = time.Millisecond
	m = send(t, s2, map[string]any{"text": "card", "reply_markup": keyboard([]map[string]any{cb("Allow", "a:1")})})
	late, err := s2.Click(s2.Owner, s2.ChatID, m.MessageID, "a:1")
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	refused(t, s2, "answerCallbackQuery", map[string]any{"callback_query_id": late}, 400, tooOld)
}

func TestTopicsAndThreads(t *testing.T) {
	s := New(t)
	var topic Topic
	ok(t, s, "createForumTopic", map[string]any{"chat_id": s.ChatID, "name": "api"}, &topic)
	if topic.MessageThreadID == 0 || topic.Name != "api" {
		t.Fatalf("topic %+v", topic)
	}
	m := send(t, s, map[string]any{"text": "in topic", "message_thread_id": topic.MessageThreadID})
	if !m.IsTopicMessage || m.MessageThreadID != topic.MessageThreadID {
		t.Fatalf("%+v", m)
	}
	send(t, s, map[string]any{"text": "general"})
	if got := s.Messages(s.ChatID, topic.MessageThreadID); len(got) != 2 || got[1].Text != "in topic" || got[0].ForumTopicCreated == nil {
		t.Fatalf("topic shows %+v", got)
	}
	if got := s.Messages(s.ChatID, 0); len(got) != 1 || got[0].Text != "general" {
		t.Fatalf("General shows %+v", got)
	}
	if ts := s.Topics(s.ChatID); len(ts) != 1 || ts[0] != topic {
		t.Fatalf("topics %+v", ts)
	}
	refused(t, s, "sendMessage", map[string]any{"chat_id": s.ChatID, "text": "x", "message_thread_id": 9999}, 400, "Bad Request: message thread not found")
	refused(t, s, "sendMessage", map[string]any{"chat_id": 42, "text": "x"}, 400, "Bad Request: chat not found")
	refused(t, s, "createForumTopic", map[string]any{"chat_id": s.ChatID, "name": ""}, 400, "Bad Request: name is empty")
	refused(t, s, "createForumTopic", map[string]any{"chat_id": s.ChatID, "name": strings.Repeat("n", 129)}, 400, "Bad Request: TOPIC_TITLE_INVALID")
	refused(t, s, "createForumTopic", map[string]any{"chat_id": s.ChatID, "name": "x", "icon_color": 1}, 400, "Bad Request: TOPIC_COLOR_INVALID")
}

func TestChatActions(t *testing.T) {
	s := New(t)
	topic := s.AddTopic("api")
	ok(t, s, "sendChatAction", map[string]any{"chat_id": s.ChatID, "message_thread_id": topic.MessageThreadID, "action": "typing"}, nil)
	if a := s.ChatActions(); len(a) != 1 || a[0].Action != "typing" || a[0].ThreadID != topic.MessageThreadID {
		t.Fatalf("actions %+v", a)
	}
	refused(t, s, "sendChatAction", map[string]any{"chat_id": s.ChatID, "action": "thinking"}, 400, "Bad Request: wrong parameter action in request")
}

func TestCommandsAreScoped(t *testing.T) {
	s := New(t)
	chatScope := map[string]any{"type": "chat", "chat_id": s.ChatID}
	cmds := []BotCommand{{Command: "open", Description: "Open a folder"}, {Command: "sessions", Description: "List sessions"}}
	ok(t, s, "setMyCommands", map[string]any{"commands": cmds, "scope": chatScope}, nil)
	var got []BotCommand
	ok(t, s, "getMyCommands", map[string]any{"scope": chatScope}, &got)
	if len(got) != 2 || got[0] != cmds[0] {
		t.Fatalf("chat scope: %+v", got)
	}
	ok(t, s, "getMyCommands", map[string]any{}, &got)
	if len(got) != 0 {
		t.Fatalf("default scope: %+v", got)
	}
	if c := s.Commands("chat:-1001234567890"); len(c) != 2 {
		t.Fatalf("Commands: %+v", c)
	}
	refused(t, s, "setMyCommands", map[string]any{"commands": []BotCommand{{Command: "Open", Description: "x"}}}, 400, "Bad Request: BOT_COMMAND_INVALID")
	refused(t, s, "setMyCommands", map[string]any{"commands": []BotCommand{{Command: "open", Description: ""}}}, 400, "Bad Request: BOT_COMMAND_DESCRIPTION_INVALID")
	refused(t, s, "setMyCommands", map[string]any{"commands": cmds, "scope": map[string]any{"type": "chat", "chat_id": 5}}, 400, "Bad Request: chat not found")
}

func TestChatAndMembers(t *testing.T) {
	s := New(t)
	var c struct {
		ID      int64  `json:"id"`
		Type    string `json:"type"`
		IsForum bool   `json:"is_forum"`
	}
	ok(t, s, "getChat", map[string]any{"chat_id": s.ChatID}, &c)
	if c.ID != s.ChatID || c.Type != "supergroup" || !c.IsForum {
		t.Fatalf("%+v", c)
	}
	stranger := s.AddUser("Mallory", false)
	member := s.AddUser("Alice", true)
	for _, tc := range []struct {
		id     int64
		status string
	}{{s.Owner.ID, "creator"}, {s.Bot.ID, "administrator"}, {member.ID, "member"}, {stranger.ID, "left"}} {
		var m struct {
			Status string `json:"status"`
			User   User   `json:"user"`
		}
		ok(t, s, "getChatMember", map[string]any{"chat_id": s.ChatID, "user_id": tc.id}, &m)
		if m.Status != tc.status || m.User.ID != tc.id {
			t.Errorf("member %d: %+v, want %s", tc.id, m, tc.status)
		}
	}
	refused(t, s, "getChatMember", map[string]any{"chat_id": s.ChatID, "user_id": 1}, 400, "Bad Request: user not found")
}

// Telegram drops the whitespace around a text and moves its entities.
func TestTextIsTrimmed(t *testing.T) {
	s := New(t)
	m := send(t, s, map[string]any{"text": "\n  <b>hi</b> there \n", "parse_mode": "HTML"})
	if m.Text != "hi there" || len(m.Entities) != 1 || m.Entities[0].Offset != 0 || m.Entities[0].Length != 2 {
		t.Fatalf("%q %+v", m.Text, m.Entities)
	}
	m = send(t, s, map[string]any{"text": " 😀 x ", "entities": []any{map[string]any{"type": "bold", "offset": 4, "length": 2}}})
	if m.Text != "😀 x" || len(m.Entities) != 1 || m.Entities[0].Offset != 3 || m.Entities[0].Length != 1 {
		t.Fatalf("%q %+v", m.Text, m.Entities)
	}
}
