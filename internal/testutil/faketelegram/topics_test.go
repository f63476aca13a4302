package faketelegram

import "testing"

func TestCloseForumTopic(t *testing.T) {
	s := New(t)
	topic := s.AddTopic("api")
	ok(t, s, "closeForumTopic", map[string]any{"chat_id": s.ChatID, "message_thread_id": topic.MessageThreadID}, nil)
	if !s.TopicClosed(topic.MessageThreadID) {
		t.Fatal("the topic is not closed")
	}
	s.RefusalsExpected.Store(true)
	r := call(t, s, "closeForumTopic", map[string]any{"chat_id": s.ChatID, "message_thread_id": topic.MessageThreadID})
	if r.OK || r.Description != "Bad Request: TOPIC_NOT_MODIFIED" {
		t.Fatalf("closing twice: %d %q, want TOPIC_NOT_MODIFIED", r.Status, r.Description)
	}
	r = call(t, s, "closeForumTopic", map[string]any{"chat_id": s.ChatID, "message_thread_id": 999})
	if r.OK || r.Description != "Bad Request: TOPIC_ID_INVALID" {
		t.Fatalf("closing an unknown topic: %d %q", r.Status, r.Description)
	}
	refused(t, s, "closeForumTopic", map[string]any{"chat_id": s.ChatID}, 400, "Bad Request: message_thread_id is empty")
}
