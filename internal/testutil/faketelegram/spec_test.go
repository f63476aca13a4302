package faketelegram

import (
	"bytes"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

func TestSpecReadsTheDescription(t *testing.T) {
	a, err := spec()
	if err != nil {
		t.Fatal(err)
	}
	if a.Version != "Bot API 10.1" {
		t.Errorf("version %q", a.Version)
	}
	for _, e := range []string{"👍", "🔥", "👀", "❤", "🎉"} {
		if !a.reactions[e] {
			t.Errorf("%s missing from the allowed reactions", e)
		}
	}
	if a.reactions["✅"] {
		t.Error("✅ is not a reaction bots may use")
	}
	if got := a.disc["ReactionType"].to["emoji"]; got != "ReactionTypeEmoji" {
		t.Errorf("ReactionType emoji → %q", got)
	}
	if got := a.disc["BotCommandScope"].to["chat"]; got != "BotCommandScopeChat" {
		t.Errorf("BotCommandScope chat → %q", got)
	}
	if a.byLower["sendmessage"] == nil || a.byLower["sendmessage"].Name != "sendMessage" {
		t.Error("sendMessage not found by lower-case name")
	}
}

func TestWrongTokenIsUnauthorized(t *testing.T) {
	s := New(t)
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/bot123:wrong/getMe", nil)
	r := do(t, req)
	if r.Status != 401 || r.ErrorCode != 401 || r.Description != "Unauthorized" || r.OK {
		t.Fatalf("got %d %q", r.Status, r.Description)
	}
	req, _ = http.NewRequest(http.MethodGet, s.URL+"/file/bot123:wrong/documents/x", nil)
	if r := do(t, req); r.Status != 401 {
		t.Fatalf("file download with a wrong token: %d", r.Status)
	}
}

func TestUnknownMethodIsNotFound(t *testing.T) {
	s := New(t)
	refused(t, s, "sendMesage", map[string]any{"chat_id": 1}, 404, "Not Found")
	// Method names are case-insensitive on Telegram.
	var me User
	ok(t, s, "GETME", nil, &me)
	if me.ID != s.Bot.ID || !me.IsBot {
		t.Fatalf("getMe: %+v", me)
	}
	if c := s.Calls(); c[len(c)-1].Method != "getMe" {
		t.Fatalf("call recorded as %q", c[len(c)-1].Method)
	}
}

func TestMissingRequiredParameter(t *testing.T) {
	s := New(t)
	refused(t, s, "sendMessage", map[string]any{"text": "hi"}, 400, "Bad Request: chat_id is empty")
	refused(t, s, "sendMessage", map[string]any{"chat_id": s.ChatID}, 400, "Bad Request: message text is empty")
	refused(t, s, "getChatMember", map[string]any{"chat_id": s.ChatID}, 400, "Bad Request: user_id is empty")
}

func TestWrongTypes(t *testing.T) {
	s := New(t)
	base := func(k string, v any) map[string]any {
		return map[string]any{"chat_id": s.ChatID, "text": "hi", k: v}
	}
	refused(t, s, "sendMessage", base("message_thread_id", "abc"), 400,
		"Bad Request: wrong parameter message_thread_id: expected Integer")
	refused(t, s, "sendMessage", base("disable_notification", "maybe"), 400,
		"Bad Request: wrong parameter disable_notification: expected Boolean")
	// Objects are checked field by field, recursively.
	refused(t, s, "sendMessage", base("reply_markup", keyboard([]map[string]any{{"text": 5, "callback_data": "x"}})), 400,
		"Bad Request: can't parse reply_markup: reply_markup.inline_keyboard[0][0].text must be a String")
	refused(t, s, "sendMessage", base("reply_parameters", map[string]any{"chat_id": s.ChatID}), 400,
		`Bad Request: can't parse reply_parameters: reply_parameters: field "message_id" of ReplyParameters is required`)
	refused(t, s, "sendMessage", base("reply_markup", map[string]any{"inline_keyboard": "row"}), 400,
		"Bad Request: can't parse reply_markup: reply_markup.inline_keyboard must be an Array")
	refused(t, s, "setMyCommands", map[string]any{"commands": []any{}, "scope": map[string]any{"type": "everyone"}}, 400,
		`Bad Request: can't parse scope: scope: unsupported BotCommandScope type "everyone"`)
	refused(t, s, "setMyCommands", map[string]any{"commands": []any{}, "scope": map[string]any{"type": "chat"}}, 400,
		`Bad Request: can't parse scope: scope: field "chat_id" of BotCommandScopeChat is required`)
	refused(t, s, "setMessageReaction", map[string]any{"chat_id": s.ChatID, "message_id": 1, "reaction": []any{map[string]any{"type": "emoji"}}}, 400,
		`Bad Request: can't parse reaction: reaction[0]: field "emoji" of ReactionTypeEmoji is required`)
	refused(t, s, "sendMessage", base("reply_markup", "{not json"), 400,
		"Bad Request: can't parse reply_markup: not a JSON value")
}

// Telegram reads every top-level value as a string, so a number sent as a
// string, or a JSON object sent as its text, is accepted.
func TestTopLevelValuesReadAsStrings(t *testing.T) {
	s := New(t)
	topic := s.AddTopic("api")
	m := send(t, s, map[string]any{
		"chat_id": "-1001234567890", "message_thread_id": strconv.FormatInt(topic.MessageThreadID, 10), "text": "hi",
		"reply_markup": `{"inline_keyboard":[[{"text":"Go","callback_data":"go"}]]}`,
	})
	if m.MessageThreadID != topic.MessageThreadID || m.ReplyMarkup == nil || m.ReplyMarkup.InlineKeyboard[0][0].CallbackData != "go" {
		t.Fatalf("sent %+v", m)
	}
}

func TestFormEncodedBody(t *testing.T) {
	s := New(t)
	r := form(t, s, "sendMessage", url.Values{
		"chat_id": {"-1001234567890"}, "text": {"<b>hi</b>"}, "parse_mode": {"HTML"},
		"reply_markup": {`{"inline_keyboard":[[{"text":"Go","callback_data":"go"}]]}`},
	})
	if !r.OK {
		t.Fatalf("%d %s", r.Status, r.Description)
	}
	var m Message
	r.decode(t, &m)
	if m.Text != "hi" || len(m.Entities) != 1 || m.Entities[0].Type != "bold" {
		t.Fatalf("%+v", m)
	}
}

// A refusal fails the test that caused it unless it was expected, and a
// parameter Telegram would silently ignore fails it too.
func TestRefusalsAndUnknownParametersFailTheTest(t *testing.T) {
	rec := &recorder{TB: t}
	s := New(rec)
	r := call(t, s, "sendMessage", map[string]any{"chat_id": s.ChatID, "text": strings.Repeat("a", 4097)})
	if r.Status != 400 {
		t.Fatalf("status %d", r.Status)
	}
	got := rec.reported()
	if len(got) != 1 || !strings.Contains(got[0], "message is too long") {
		t.Fatalf("reported %q", got)
	}
	call(t, s, "sendMessage", map[string]any{"chat_id": s.ChatID, "text": "hi", "message_thred_id": 5,
		"reply_markup": keyboard([]map[string]any{{"text": "a", "callback_data": "b", "colour": "red"}})})
	got = rec.reported()
	if len(got) != 2 || !strings.Contains(got[1], "message_thred_id") || !strings.Contains(got[1], "colour") {
		t.Fatalf("reported %q", got)
	}
	// A state error a correct bot meets too is not reported.
	call(t, s, "deleteMessage", map[string]any{"chat_id": s.ChatID, "message_id": 999})
	if got := rec.reported(); len(got) != 2 {
		t.Fatalf("reported %q", got)
	}
}

func TestUnsupportedContentType(t *testing.T) {
	s := New(t)
	s.RefusalsExpected.Store(true)
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/bot"+s.Token+"/getMe", bytes.NewReader([]byte("x")))
	req.Header.Set("Content-Type", "text/plain")
	if r := do(t, req); r.Status != 400 {
		t.Fatalf("status %d", r.Status)
	}
}

// The Bot API server cannot tell an empty value from a missing one.
func TestEmptyValueIsMissing(t *testing.T) {
	s := New(t)
	refused(t, s, "sendMessage", map[string]any{"chat_id": "", "text": "hi"}, 400, "Bad Request: chat_id is empty")
	m := send(t, s, map[string]any{"text": "hi", "message_thread_id": ""})
	if m.MessageThreadID != 0 {
		t.Fatalf("%+v", m)
	}
}

// The fake checks its own results against the description, so it cannot
// drift from what Telegram sends.
func TestResultsAreChecked(t *testing.T) {
	a, err := spec()
	if err != nil {
		t.Fatal(err)
	}
	getMe := a.Methods["getMe"]
	if msg := a.checkResult(getMe, map[string]any{"id": 1, "is_bot": true}); !strings.Contains(msg, `"first_name"`) {
		t.Fatalf("missing first_name: %q", msg)
	}
	if msg := a.checkResult(getMe, map[string]any{"id": 1, "is_bot": true, "first_name": "b", "nick": "x"}); !strings.Contains(msg, "result.nick") {
		t.Fatalf("unknown field: %q", msg)
	}
	if msg := a.checkResult(a.Methods["editMessageText"], true); msg != "" {
		t.Fatalf("Message or Boolean: %q", msg)
	}
}
