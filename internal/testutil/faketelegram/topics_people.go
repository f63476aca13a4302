package faketelegram

import "fmt"

// A person closing or reopening a topic in the app, as Telegram has it: an
// administrator (or the group's creator) may, or the person who created
// the topic (the fake's topics are all the bot's, so not a member); the
// topic's service message, forum_topic_closed or forum_topic_reopened,
// goes to the bot as a message update. Closing a closed topic or reopening
// an open one does nothing, as the app offers neither.

// CloseTopicAs closes a topic of the group as from.
func (s *Server) CloseTopicAs(from User, threadID int64) (Message, error) {
	return s.setTopicClosed(from, threadID, true)
}

// ReopenTopicAs reopens a closed topic of the group as from.
func (s *Server) ReopenTopicAs(from User, threadID int64) (Message, error) {
	return s.setTopicClosed(from, threadID, false)
}

func (s *Server) setTopicClosed(from User, threadID int64, closed bool) (Message, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chats[s.ChatID]
	switch status := c.members[from.ID]; {
	case c.topics[threadID] == nil:
		return Message{}, fmt.Errorf("no topic %d in the group", threadID)
	case status != "creator" && status != "administrator":
		return Message{}, fmt.Errorf("%s may not manage topics (%q)", from.FirstName, status)
	case c.closed[threadID] == closed:
		return Message{}, fmt.Errorf("topic %d is already in that state", threadID)
	}
	if c.closed == nil {
		c.closed = map[int64]bool{}
	}
	c.closed[threadID] = closed
	sender := from
	m := &Message{From: &sender}
	if closed {
		m.ForumTopicClosed = &struct{}{}
	} else {
		m.ForumTopicReopened = &struct{}{}
	}
	s.post(c, threadID, m)
	snap := m.clone()
	s.enqueue("message", snap)
	return snap, nil
}
