package faketelegram

// Topics in a bot's private chats (Bot API 9.3+): a bot whose forum topic
// mode is turned on in @BotFather (getMe's has_topics_enabled) may open
// topics in the private chat of a person who started it (createForumTopic
// takes a private chat), and message_thread_id names one of them there.
// Without the mode, a private chat is no forum: createForumTopic is "the
// chat is not a forum", as in a group without topics (the fake's choice of
// wording: Telegram documents none). A person who never started the bot is
// the 403 every send to them gets (chatFor).

// SetPrivateTopics turns the bot's topic mode in private chats on or off.
func (s *Server) SetPrivateTopics(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.privateTopics = on
}

// privateTopic reports whether c is a private chat, and refuses a topic
// there when the bot's topic mode is off; caller holds s.mu.
func (s *Server) privateTopic(c *chat) (private bool, e *apiErr) {
	if c.info.Type != "private" {
		return false, nil
	}
	if !s.privateTopics {
		return true, stateErr("the chat is not a forum")
	}
	return true, nil
}

// privateThread resolves message_thread_id in a private chat: only a topic
// the chat has; caller holds s.mu.
func privateThread(c *chat, id int64) (int64, *apiErr) {
	if c.topics[id] == nil {
		return 0, stateErr("message thread not found")
	}
	return id, nil
}
