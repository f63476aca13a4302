package faketelegram

import "testing"

// A group the bot was added to: a plain member until made an
// administrator, and an administrator without Manage topics may not create
// topics, as Telegram answers.
func TestGroupRights(t *testing.T) {
	s := New(t)
	g := s.AddGroup("work", Forum)
	var m struct {
		Status          string `json:"status"`
		CanManageTopics bool   `json:"can_manage_topics"`
	}
	ok(t, s, "getChatMember", map[string]any{"chat_id": g, "user_id": s.Bot.ID}, &m)
	if m.Status != "member" {
		t.Fatalf("the bot added to a group: %+v", m)
	}
	s.RefusalsExpected.Store(true)
	refused(t, s, "createForumTopic", map[string]any{"chat_id": g, "name": "api"}, 400, "Bad Request: not enough rights to create a topic")
	s.SetMember(g, s.Bot.ID, "administrator")
	s.SetManageTopics(g, s.Bot.ID, false)
	ok(t, s, "getChatMember", map[string]any{"chat_id": g, "user_id": s.Bot.ID}, &m)
	if m.Status != "administrator" || m.CanManageTopics {
		t.Fatalf("an administrator without Manage topics: %+v", m)
	}
	refused(t, s, "createForumTopic", map[string]any{"chat_id": g, "name": "api"}, 400, "Bad Request: not enough rights to create a topic")
	s.SetManageTopics(g, s.Bot.ID, true)
	ok(t, s, "createForumTopic", map[string]any{"chat_id": g, "name": "api"}, nil)
}

// A basic group and a supergroup with Topics off are no forums: getChat
// says so and createForumTopic is refused.
func TestGroupKinds(t *testing.T) {
	s := New(t)
	for _, kind := range []string{BasicGroup, Supergroup} {
		g := s.AddGroup("plain", kind)
		s.SetMember(g, s.Bot.ID, "administrator")
		var c struct {
			Type    string `json:"type"`
			IsForum bool   `json:"is_forum"`
		}
		ok(t, s, "getChat", map[string]any{"chat_id": g}, &c)
		want := map[string]string{BasicGroup: "group", Supergroup: "supergroup"}[kind]
		if c.Type != want || c.IsForum {
			t.Errorf("%s: getChat %+v", kind, c)
		}
		s.RefusalsExpected.Store(true)
		refused(t, s, "createForumTopic", map[string]any{"chat_id": g, "name": "api"}, 400, "Bad Request: the chat is not a forum")
		s.RefusalsExpected.Store(false)
	}
}
