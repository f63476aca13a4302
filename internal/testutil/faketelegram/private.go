package faketelegram

// Private chats. A person's private chat with the bot has the person's id.
// Telegram lets a bot write there only once the person has started it
// (pressed Start, which sends /start) and until they block it: before, and
// after, a send is 403 with these descriptions. A person Telegram never
// showed the bot (no common chat) is "chat not found".

// forbidden is Telegram's 403: a state a correct bot meets too.
func forbidden(desc string) *apiErr { return &apiErr{code: 403, desc: "Forbidden: " + desc} }

// StartBot is u pressing Start in their private chat with the bot: the
// chat opens (AddPrivateChat) and u's /start arrives as an update.
func (s *Server) StartBot(u User) Message {
	s.mu.Lock()
	if c := s.chats[u.ID]; c != nil {
		c.blocked = false
	}
	s.mu.Unlock()
	dm := s.AddPrivateChat(u)
	return s.Inject(Incoming{From: u, ChatID: dm, Text: "/start"})
}

// BlockBot is u blocking the bot: its sends to their private chat fail.
func (s *Server) BlockBot(u User) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.chats[u.ID]; c != nil {
		c.blocked = true
	}
}
