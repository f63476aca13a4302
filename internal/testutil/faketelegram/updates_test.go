package faketelegram

import (
	"encoding/json"
	"net/http"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

type gotUpdate struct {
	UpdateID      int64          `json:"update_id"`
	Message       *Message       `json:"message"`
	CallbackQuery *CallbackQuery `json:"callback_query"`
}

func poll(t *testing.T, s *Server, body map[string]any) []gotUpdate {
	t.Helper()
	var ups []gotUpdate
	ok(t, s, "getUpdates", body, &ups)
	return ups
}

func ids(ups []gotUpdate) []int64 {
	var out []int64
	for _, u := range ups {
		out = append(out, u.UpdateID)
	}
	return out
}

func TestUnconfirmedUpdatesAreSentAgain(t *testing.T) {
	s := New(t)
	a := s.OwnerText(0, "one")
	s.OwnerText(0, "two")
	first := poll(t, s, map[string]any{})
	if len(first) != 2 || first[0].Message.Text != "one" || first[0].Message.MessageID != a.MessageID || first[1].UpdateID != first[0].UpdateID+1 {
		t.Fatalf("first poll %+v", first)
	}
	// Without an offset nothing is confirmed: the same updates come again.
	if again := poll(t, s, map[string]any{}); len(again) != 2 || again[0].UpdateID != first[0].UpdateID {
		t.Fatalf("again %v", ids(again))
	}
	// offset = last + 1 confirms both; then nothing is pending.
	if rest := poll(t, s, map[string]any{"offset": first[0].UpdateID + 1}); len(rest) != 1 || rest[0].UpdateID != first[1].UpdateID {
		t.Fatalf("after confirming one: %v", ids(rest))
	}
	if rest := poll(t, s, map[string]any{"offset": first[1].UpdateID + 1}); len(rest) != 0 {
		t.Fatalf("after confirming both: %v", ids(rest))
	}
	if p := s.Pending(); len(p) != 0 {
		t.Fatalf("pending %v", p)
	}
	// A confirmed update never comes back, even with an older offset.
	if rest := poll(t, s, map[string]any{"offset": first[0].UpdateID}); len(rest) != 0 {
		t.Fatalf("confirmed update came back: %v", ids(rest))
	}
}

func TestLimitAndNegativeOffset(t *testing.T) {
	s := New(t)
	for _, txt := range []string{"a", "b", "c", "d"} {
		s.OwnerText(0, txt)
	}
	if got := poll(t, s, map[string]any{"limit": 3}); len(got) != 3 || got[0].Message.Text != "a" {
		t.Fatalf("limit 3: %v", ids(got))
	}
	// Limits outside 1–100 are clamped.
	if got := poll(t, s, map[string]any{"limit": 0}); len(got) != 1 {
		t.Fatalf("limit 0: %v", ids(got))
	}
	// offset -2: only the last two are kept; the others are forgotten.
	got := poll(t, s, map[string]any{"offset": -2})
	if len(got) != 2 || got[0].Message.Text != "c" || got[1].Message.Text != "d" {
		t.Fatalf("offset -2: %+v", got)
	}
	if p := s.Pending(); len(p) != 2 {
		t.Fatalf("pending %v", p)
	}
}

func TestLongPollWakesOnAnUpdate(t *testing.T) {
	s := New(t)
	done := make(chan []gotUpdate, 1)
	go func() { done <- poll(t, s, map[string]any{"timeout": 30}) }()
	// Wait until the poll is parked, then inject.
	if !s.WaitFor(5*time.Second, func() bool { return s.Polling() }) {
		t.Fatal("the poll never started")
	}
	s.OwnerText(0, "wake")
	select {
	case ups := <-done:
		if len(ups) != 1 || ups[0].Message.Text != "wake" {
			t.Fatalf("%+v", ups)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the long poll did not return on an update")
	}
}

func TestLongPollTimesOutEmpty(t *testing.T) {
	s := New(t)
	start := time.Now()
	ups := poll(t, s, map[string]any{"timeout": 1})
	if len(ups) != 0 || time.Since(start) < time.Second {
		t.Fatalf("%d updates after %v", len(ups), time.Since(start))
	}
}

// A second getUpdates ends the first with 409, as Telegram does when two
// instances poll one bot.
func TestConcurrentPollsConflict(t *testing.T) {
	s := New(t)
	var wg sync.WaitGroup
	var first reply
	wg.Add(1)
	go func() {
		defer wg.Done()
		first = call(t, s, "getUpdates", map[string]any{"timeout": 30})
	}()
	if !s.WaitFor(5*time.Second, func() bool { return s.Polling() }) {
		t.Fatal("the poll never started")
	}
	second := call(t, s, "getUpdates", map[string]any{"timeout": 0})
	wg.Wait()
	if first.Status != 409 || first.Description != "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running" {
		t.Fatalf("first poll: %d %s", first.Status, first.Description)
	}
	if !second.OK {
		t.Fatalf("second poll: %d %s", second.Status, second.Description)
	}
}

func TestAllowedUpdatesFilterAndPersist(t *testing.T) {
	s := New(t)
	m := send(t, s, map[string]any{"text": "card", "reply_markup": keyboard([]map[string]any{cb("Go", "go")})})
	s.OwnerText(0, "text")
	if _, err := s.Click(s.Owner, s.ChatID, m.MessageID, "go"); err != nil {
		t.Fatal(err)
	}
	got := poll(t, s, map[string]any{"allowed_updates": []string{"callback_query"}})
	if len(got) != 1 || got[0].CallbackQuery == nil || got[0].CallbackQuery.Data != "go" {
		t.Fatalf("%+v", got)
	}
	// The setting stays in force for later calls that do not repeat it.
	s.OwnerText(0, "ignored")
	if got := poll(t, s, map[string]any{"offset": got[0].UpdateID + 1}); len(got) != 0 {
		t.Fatalf("message delivered despite allowed_updates: %+v", got)
	}
	// An empty list restores the default.
	s.OwnerText(0, "back")
	if got := poll(t, s, map[string]any{"allowed_updates": []string{}}); len(got) != 1 || got[0].Message.Text != "back" {
		t.Fatalf("%+v", got)
	}
}

func TestInjectedMessagesLookReal(t *testing.T) {
	s := New(t)
	topic := s.AddTopic("api")
	in := s.OwnerText(topic.MessageThreadID, "hello")
	ups := poll(t, s, map[string]any{})
	m := ups[0].Message
	if m.From.ID != s.Owner.ID || m.Chat.ID != s.ChatID || !m.Chat.IsForum || m.MessageThreadID != topic.MessageThreadID || !m.IsTopicMessage || m.Date == 0 {
		t.Fatalf("%+v", m)
	}
	// In a topic, a plain message replies to the topic's creation message.
	if m.ReplyToMessage == nil || m.ReplyToMessage.ForumTopicCreated == nil || m.ReplyToMessage.MessageID != topic.MessageThreadID {
		t.Fatalf("reply_to_message %+v", m.ReplyToMessage)
	}
	if in.MessageID != m.MessageID {
		t.Fatalf("returned %d, delivered %d", in.MessageID, m.MessageID)
	}
	// A General message replies to nothing.
	s.OwnerText(0, "general")
	ups = poll(t, s, map[string]any{"offset": ups[0].UpdateID + 1})
	if g := ups[0].Message; g.ReplyToMessage != nil || g.MessageThreadID != 0 || g.IsTopicMessage {
		t.Fatalf("%+v", g)
	}
}

func TestForceReplyAnswer(t *testing.T) {
	s := New(t)
	topic := s.AddTopic("api")
	plain := send(t, s, map[string]any{"text": "card", "message_thread_id": topic.MessageThreadID})
	if _, err := s.ForceReplyAnswer(s.Owner, s.ChatID, plain.MessageID, "x"); err == nil {
		t.Fatal("a reply to a message that asked for none was injected")
	}
	ask := send(t, s, map[string]any{"text": "Why deny?", "message_thread_id": topic.MessageThreadID,
		"reply_markup": map[string]any{"force_reply": true, "input_field_placeholder": "instructions"}})
	in, err := s.ForceReplyAnswer(s.Owner, s.ChatID, ask.MessageID, "use the other API")
	if err != nil {
		t.Fatal(err)
	}
	if in.ReplyToMessage == nil || in.ReplyToMessage.MessageID != ask.MessageID || in.MessageThreadID != topic.MessageThreadID {
		t.Fatalf("%+v", in)
	}
}

func TestClickUpdate(t *testing.T) {
	s := New(t)
	stranger := s.AddUser("Mallory", true)
	m := send(t, s, map[string]any{"text": "card", "reply_markup": keyboard([]map[string]any{cb("Allow", "a:1")})})
	id, err := s.Click(stranger, s.ChatID, m.MessageID, "a:1")
	if err != nil {
		t.Fatal(err)
	}
	ups := poll(t, s, map[string]any{})
	q := ups[0].CallbackQuery
	if q == nil || q.ID != id || q.From.ID != stranger.ID || q.Data != "a:1" || q.Message == nil || q.Message.MessageID != m.MessageID || q.ChatInstance == "" {
		t.Fatalf("%+v", ups[0])
	}
	ok(t, s, "deleteMessage", map[string]any{"chat_id": s.ChatID, "message_id": m.MessageID}, nil)
	if _, err := s.Click(s.Owner, s.ChatID, m.MessageID, "a:1"); err == nil {
		t.Fatal("a click on a deleted message was injected")
	}
}

func TestRateLimitInjected(t *testing.T) {
	s := New(t)
	s.RateLimit("sendMessage", 2, 7)
	for i := 0; i < 2; i++ {
		r := call(t, s, "sendMessage", map[string]any{"chat_id": s.ChatID, "text": "x"})
		if r.Status != 429 || r.ErrorCode != 429 || r.Parameters.RetryAfter != 7 || r.Description != "Too Many Requests: retry after 7" || r.Header.Get("Retry-After") != "7" {
			t.Fatalf("call %d: %d %s %+v", i, r.Status, r.Description, r.Parameters)
		}
	}
	send(t, s, map[string]any{"text": "x"})
	if got := s.Messages(s.ChatID, 0); len(got) != 1 {
		t.Fatalf("the chat shows %d messages, want only the one that got through", len(got))
	}
	// Other methods are not limited.
	ok(t, s, "getMe", nil, nil)
	calls := s.CallsTo("sendMessage")
	if len(calls) != 3 || calls[0].Status != 429 || calls[2].Status != 200 {
		t.Fatalf("%+v", calls)
	}
}

func TestHook(t *testing.T) {
	s := New(t)
	s.Hook("sendMessage", func(c Call) *Error {
		if strings.Contains(c.Params["text"], "fail") {
			return &Error{Code: 502, Description: "Bad Gateway"}
		}
		return nil
	})
	if r := call(t, s, "sendMessage", map[string]any{"chat_id": s.ChatID, "text": "please fail"}); r.Status != 502 || r.Description != "Bad Gateway" {
		t.Fatalf("%d %s", r.Status, r.Description)
	}
	send(t, s, map[string]any{"text": "fine"})
}

func TestUpdatesAreValidAgainstTheDescription(t *testing.T) {
	s := New(t)
	topic := s.AddTopic("api")
	m := send(t, s, map[string]any{"text": "card", "message_thread_id": topic.MessageThreadID, "reply_markup": keyboard([]map[string]any{cb("Go", "go")})})
	s.OwnerText(topic.MessageThreadID, "hi")
	s.OwnerVoice(topic.MessageThreadID, []byte("ogg"), 1)
	s.OwnerPhoto(topic.MessageThreadID, []byte("jpg"), "c")
	s.OwnerDocument(topic.MessageThreadID, "a.txt", []byte("a"), "")
	if _, err := s.Click(s.Owner, s.ChatID, m.MessageID, "go"); err != nil {
		t.Fatal(err)
	}
	var raw []json.RawMessage
	ok(t, s, "getUpdates", map[string]any{}, &raw)
	a, _ := spec()
	for _, u := range raw {
		v, err := decodeJSON(u)
		if err != nil {
			t.Fatal(err)
		}
		var unknown []string
		if msg := a.checkValue(v, "Update", "update", &unknown); msg != "" || len(unknown) > 0 {
			t.Errorf("%s: %s %v", u, msg, unknown)
		}
	}
}

func TestDispatchAndPrivateChat(t *testing.T) {
	s := New(t)
	edited := Message{MessageID: 1, Chat: Chat{ID: s.ChatID, Type: "supergroup"}, Date: 1, EditDate: 2, Text: "edited"}
	id := s.Dispatch("edited_message", edited)
	dm := s.AddPrivateChat(s.Owner)
	s.Inject(Incoming{ChatID: dm, Text: "/start"})
	var raw []map[string]json.RawMessage
	ok(t, s, "getUpdates", map[string]any{}, &raw)
	if len(raw) != 2 || raw[0]["edited_message"] == nil || string(raw[0]["update_id"]) != strconv.FormatInt(id, 10) {
		t.Fatalf("%v", raw)
	}
	var m Message
	if err := json.Unmarshal(raw[1]["message"], &m); err != nil || m.Chat.Type != "private" || m.Chat.ID != s.Owner.ID || m.Text != "/start" {
		t.Fatalf("%s %v", raw[1]["message"], err)
	}
	send(t, s, map[string]any{"chat_id": dm, "text": "hello"})
	if got := s.Messages(dm, 0); len(got) != 2 {
		t.Fatalf("private chat shows %+v", got)
	}
}

func TestWaitMessage(t *testing.T) {
	s := New(t)
	go func() {
		time.Sleep(10 * time.Millisecond)
		body := strings.NewReader(`{"chat_id":-1001234567890,"text":"late reply"}`)
		if resp, err := http.Post(s.URL+"/bot"+s.Token+"/sendMessage", "application/json", body); err == nil {
			resp.Body.Close()
		}
	}()
	m, found := s.WaitMessage(10*time.Second, func(m Message) bool { return m.Text == "late reply" })
	if !found || m.From.ID != s.Bot.ID {
		t.Fatalf("%+v %v", m, found)
	}
	if _, found := s.WaitMessage(10*time.Millisecond, func(m Message) bool { return m.Text == "never" }); found {
		t.Fatal("found a message nobody sent")
	}
}

// A person outside the group cannot post in it; the fake refuses to
// pretend otherwise.
func TestInjectFromNonMemberFailsTheTest(t *testing.T) {
	rec := &fatalRecorder{recorder: recorder{TB: t}}
	s := New(rec)
	outsider := s.AddUser("Eve", false)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Inject(Incoming{From: outsider, Text: "hi"})
	}()
	<-done
	if got := rec.reported(); len(got) != 1 || !strings.Contains(got[0], "not a member") {
		t.Fatalf("reported %q", got)
	}
	if len(s.Pending()) != 0 {
		t.Fatal("the update was queued")
	}
}

// fatalRecorder records Fatalf and ends the goroutine, as testing does.
type fatalRecorder struct{ recorder }

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}

// Telegram marks the commands in a person's text.
func TestInjectedCommandsCarryEntities(t *testing.T) {
	s := New(t)
	m := s.OwnerText(0, "/open@ccbridge_test_bot ~/src and /help")
	want := []Entity{{Type: "bot_command", Length: 23}, {Type: "bot_command", Offset: 34, Length: 5}}
	if !reflect.DeepEqual(m.Entities, want) {
		t.Fatalf("%+v", m.Entities)
	}
	if m := s.OwnerText(0, "a/b and 😀 /x"); len(m.Entities) != 1 || m.Entities[0].Offset != 11 {
		t.Fatalf("%+v", m.Entities)
	}
}

// ForceReply's placeholder is 1-64 characters, as the description says.
func TestForceReplyPlaceholderLength(t *testing.T) {
	s := New(t)
	for _, ph := range []string{"", strings.Repeat("é", 65)} {
		refused(t, s, "sendMessage", map[string]any{"chat_id": s.ChatID, "text": "Why?",
			"reply_markup": map[string]any{"force_reply": true, "input_field_placeholder": ph}}, 400, "Bad Request: input_field_placeholder must be 1-64 characters")
	}
	send(t, s, map[string]any{"text": "Why?", "reply_markup": map[string]any{"force_reply": true, "input_field_placeholder": strings.Repeat("é", 64)}})
}
