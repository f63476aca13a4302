package faketelegram

// Closing forum topics, as Telegram does: only an administrator with
// can_manage_topics (the fake's bot is one) closes a topic; General is
// closed by closeGeneralForumTopic, not here; closing a closed topic is
// TOPIC_NOT_MODIFIED. A closed topic still takes the bot's messages (an
// administrator may post there), so sends are not refused.

func (s *Server) closeForumTopic(p params) (any, *apiErr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, e := s.chatFor(p, "chat_id")
	if e != nil {
		return nil, e
	}
	if !c.info.IsForum {
		return nil, stateErr("the chat is not a forum")
	}
	if c.members[s.Bot.ID] != "administrator" || c.noTopics[s.Bot.ID] {
		return nil, stateErr("not enough rights to manage topics")
	}
	id := p.int("message_thread_id")
	if c.topics[id] == nil {
		return nil, stateErr("TOPIC_ID_INVALID")
	}
	if c.closed == nil {
		c.closed = map[int64]bool{}
	}
	if c.closed[id] {
		return nil, stateErr("TOPIC_NOT_MODIFIED")
	}
	c.closed[id] = true
	s.notify()
	return true, nil
}

// TopicClosed reports whether a topic of the group was closed.
func (s *Server) TopicClosed(threadID int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.chats[s.ChatID].closed[threadID]
}
