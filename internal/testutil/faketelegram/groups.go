package faketelegram

// Groups other than the fake's own, and the bot's standing in them, as a
// person sets them up in the Telegram app: the group a bot is added to is
// one it is a plain member of until made an administrator; a basic group
// has no topics (turning Topics on makes it a supergroup with a new id);
// an administrator may lack Manage topics, and then Telegram refuses it
// createForumTopic.

// Group kinds for AddGroup.
const (
	BasicGroup = "group"      // no topics; an id like -4001234567
	Supergroup = "supergroup" // Topics off
	Forum      = "forum"      // a supergroup with Topics on
)

// AddGroup makes a group the owner created and the bot was added to, as a
// plain member; it returns the group's id.
func (s *Server) AddGroup(title, kind string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.ids.Add(1)
	id := -1002000000000 - n
	typ := "supergroup"
	if kind == BasicGroup {
		id, typ = -4000000000-n, "group"
	}
	s.chats[id] = &chat{
		info:    Chat{ID: id, Type: typ, Title: title, IsForum: kind == Forum},
		members: map[int64]string{s.Owner.ID: "creator", s.Bot.ID: "member"},
		topics:  map[int64]*Topic{},
		byID:    map[int64]*Message{},
		nextID:  2,
	}
	s.notify()
	return id
}

// SetMember sets a user's status in a chat ("" removes them: "left").
func (s *Server) SetMember(chatID, userID int64, status string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chats[chatID]
	if c == nil {
		s.t.Fatalf("faketelegram: set a member of unknown chat %d", chatID)
	}
	if status == "" {
		delete(c.members, userID)
	} else {
		c.members[userID] = status
	}
	s.notify()
}

// SetManageTopics grants or withdraws an administrator's Manage topics.
func (s *Server) SetManageTopics(chatID, userID int64, can bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chats[chatID]
	if c == nil {
		s.t.Fatalf("faketelegram: rights in unknown chat %d", chatID)
	}
	if c.noTopics == nil {
		c.noTopics = map[int64]bool{}
	}
	c.noTopics[userID] = !can
	s.notify()
}

// SetForum turns a supergroup's Topics on or off.
func (s *Server) SetForum(chatID int64, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chats[chatID]
	if c == nil || c.info.Type != "supergroup" {
		s.t.Fatalf("faketelegram: chat %d is not a supergroup", chatID)
	}
	c.info.IsForum = on
	s.notify()
}
