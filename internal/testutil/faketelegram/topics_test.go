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

func TestCloseTopicAsAPersonSendsTheServiceMessage(t *testing.T) {
	s := New(t)
	topic := s.AddTopic("work").MessageThreadID
	eve := s.AddUser("Eve", true)
	if _, err := s.CloseTopicAs(eve, topic); err == nil {
		t.Fatal("a plain member closed a topic")
	}
	m, err := s.CloseTopicAs(s.Owner, topic)
	if err != nil || m.ForumTopicClosed == nil || m.MessageThreadID != topic || !s.TopicClosed(topic) {
		t.Fatalf("close: %+v, %v", m, err)
	}
	if _, err := s.CloseTopicAs(s.Owner, topic); err == nil {
		t.Fatal("a closed topic was closed again")
	}
	if m, err := s.ReopenTopicAs(s.Owner, topic); err != nil || m.ForumTopicReopened == nil || s.TopicClosed(topic) {
		t.Fatalf("reopen: %+v, %v", m, err)
	}
	if n := len(s.Pending()); n != 2 {
		t.Fatalf("%d updates queued, want the two service messages", n)
	}
}
