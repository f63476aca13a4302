package faketelegram

import (
	"testing"
)

// A bot's private chats have topics only when its topic mode is on
// (getMe's has_topics_enabled) and the person has started it; a message
// sent with a message_thread_id there must name one of those topics, and
// a person's message in one carries it.
func TestPrivateTopics(t *testing.T) {
	s := New(t)
	var me struct {
		HasTopicsEnabled bool `json:"has_topics_enabled"`
	}
	call(t, s, "getMe", map[string]any{}).decode(t, &me)
	if me.HasTopicsEnabled {
		t.Fatal("topic mode is on before it was turned on")
	}
	s.SetPrivateTopics(true)
	call(t, s, "getMe", map[string]any{}).decode(t, &me)
	if !me.HasTopicsEnabled {
		t.Fatal("getMe does not report the topic mode turned on")
	}

	owner := s.Owner.ID
	if r := call(t, s, "createForumTopic", map[string]any{"chat_id": owner, "name": "api"}); r.Status != 403 || r.Description != "Forbidden: bot can't initiate conversation with a user" {
		t.Fatalf("a topic in a chat not started: %+v", r)
	}
	s.StartBot(s.Owner)
	s.SetPrivateTopics(false)
	if r := call(t, s, "createForumTopic", map[string]any{"chat_id": owner, "name": "api"}); r.Status != 400 || r.Description != "Bad Request: the chat is not a forum" {
		t.Fatalf("a topic without topic mode: %+v", r)
	}
	if r := call(t, s, "sendMessage", map[string]any{"chat_id": owner, "message_thread_id": 5, "text": "x"}); r.Status != 400 || r.Description != "Bad Request: message thread not found" {
		t.Fatalf("a send to a topic of a chat without topics: %+v", r)
	}
	s.SetPrivateTopics(true)
	r := call(t, s, "createForumTopic", map[string]any{"chat_id": owner, "name": "api"})
	var topic Topic
	r.decode(t, &topic)
	if !r.OK || topic.MessageThreadID == 0 || topic.Name != "api" {
		t.Fatalf("createForumTopic in a private chat: %+v", r)
	}
	if r := call(t, s, "sendMessage", map[string]any{"chat_id": owner, "message_thread_id": topic.MessageThreadID + 100, "text": "x"}); r.Status != 400 || r.Description != "Bad Request: message thread not found" {
		t.Fatalf("a send to an unknown private topic: %+v", r)
	}
	send(t, s, map[string]any{"chat_id": owner, "message_thread_id": topic.MessageThreadID, "text": "in the topic"})
	got := s.Messages(owner, topic.MessageThreadID)
	if len(got) == 0 || got[len(got)-1].Text != "in the topic" || !got[len(got)-1].IsTopicMessage {
		t.Fatalf("the private topic shows %+v", got)
	}
	in := s.Inject(Incoming{ChatID: owner, ThreadID: topic.MessageThreadID, Text: "hello"})
	if in.MessageThreadID != topic.MessageThreadID || !in.IsTopicMessage || in.Chat.Type != "private" {
		t.Fatalf("a person's message in a private topic: %+v", in)
	}
	if ts := s.Topics(owner); len(ts) != 1 || ts[0].Name != "api" {
		t.Fatalf("Topics(private chat) = %+v", ts)
	}
}
