package faketelegram

import (
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// maxDownload is what getFile lets a bot download (20 MB).
const maxDownload = 20 << 20

// storeFile keeps bytes under a new file id; caller holds s.mu.
func (s *Server) storeFile(dir, name string, data []byte) *storedFile {
	n := s.ids.Add(1)
	ext := path.Ext(name)
	f := &storedFile{
		id:       fmt.Sprintf("BQACAgIAAxkBAAI%d", n),
		uniqueID: fmt.Sprintf("AgAD%d", n),
		path:     fmt.Sprintf("%s/file_%d%s", dir, n, ext),
		data:     data,
	}
	s.files[f.id] = f
	s.byPath[f.path] = f
	return f
}

func (s *Server) sendDocument(p params) (any, *apiErr) {
	caption, ents, e := formatted(p, "caption", "parse_mode", "caption_entities")
	if e != nil {
		return nil, e
	}
	if utf16Len(caption) > maxCaption {
		return nil, badRequest("message caption is too long")
	}
	kb, force, e := s.markup(p)
	if e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, e := s.chatFor(p, "chat_id")
	if e != nil {
		return nil, e
	}
	thread, e := s.threadFor(c, p)
	if e != nil {
		return nil, e
	}
	reply, e := s.replyTarget(c, p)
	if e != nil {
		return nil, e
	}
	up := p.files["document"]
	if name, ok := strings.CutPrefix(p.str("document"), "attach://"); ok {
		up = p.files[name]
	}
	var doc Document
	switch {
	case up != nil:
		f := s.storeFile("documents", up.name, up.data)
		doc = Document{FileID: f.id, FileUniqueID: f.uniqueID, FileName: up.name, MimeType: "application/octet-stream", FileSize: len(up.data)}
	case s.files[p.str("document")] != nil:
		f := s.files[p.str("document")]
		doc = Document{FileID: f.id, FileUniqueID: f.uniqueID, FileName: path.Base(f.path), FileSize: len(f.data)}
	default:
		return nil, stateErr("wrong file identifier/HTTP URL specified")
	}
	m := &Message{From: &s.Bot, Caption: caption, CaptionEntities: ents, Document: &doc, ReplyMarkup: kb, ForceReply: force}
	if reply != nil {
		r := reply.clone()
		r.ReplyToMessage = nil
		m.ReplyToMessage = &r
	}
	return s.post(c, thread, m).clone(), nil
}

func (s *Server) getFile(p params) (any, *apiErr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.files[p.str("file_id")]
	if f == nil {
		return nil, stateErr("invalid file_id")
	}
	if len(f.data) > maxDownload {
		return nil, stateErr("file is too big")
	}
	return map[string]any{"file_id": f.id, "file_unique_id": f.uniqueID, "file_size": len(f.data), "file_path": f.path}, nil
}

// topicColors are the only icon colours createForumTopic takes.
var topicColors = map[int64]bool{7322096: true, 16766590: true, 13338331: true, 9367192: true, 16749490: true, 16478047: true}

func (s *Server) createForumTopic(p params) (any, *apiErr) {
	name := p.str("name")
	if n := utf8.RuneCountInString(name); n < 1 || n > 128 {
		return nil, badRequest("TOPIC_TITLE_INVALID")
	}
	color := int64(7322096)
	if p.has("icon_color") {
		color = p.int("icon_color")
		if !topicColors[color] {
			return nil, badRequest("TOPIC_COLOR_INVALID")
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, e := s.chatFor(p, "chat_id")
	if e != nil {
		return nil, e
	}
	t, e := s.addTopic(c, name, int(color))
	if e != nil {
		return nil, e
	}
	return *t, nil
}

// addTopic opens a topic with its service message; caller holds s.mu.
func (s *Server) addTopic(c *chat, name string, color int) (*Topic, *apiErr) {
	if private, e := s.privateTopic(c); e != nil {
		return nil, e
	} else if private {
		return s.openTopic(c, name, color), nil
	}
	if !c.info.IsForum {
		return nil, stateErr("the chat is not a forum")
	}
	if c.members[s.Bot.ID] != "administrator" || c.noTopics[s.Bot.ID] {
		return nil, stateErr("not enough rights to create a topic")
	}
	return s.openTopic(c, name, color), nil
}

// openTopic posts a topic's service message, which opens the thread and
// belongs to it; caller holds s.mu.
func (s *Server) openTopic(c *chat, name string, color int) *Topic {
	m := s.post(c, 0, &Message{From: &s.Bot, ForumTopicCreated: &ForumTopicCreated{Name: name, IconColor: color}})
	m.MessageThreadID, m.IsTopicMessage = m.MessageID, true
	t := &Topic{MessageThreadID: m.MessageID, Name: name, IconColor: color}
	c.topics[t.MessageThreadID] = t
	return t
}

var commandName = regexp.MustCompile(`^[a-z0-9_]{1,32}$`)

// scopeKey names a command scope: "default", "all_group_chats",
// "chat:<id>", "chat_member:<id>:<user>", each with "/<language>" when one
// is given.
func (s *Server) scopeKey(p params) (string, *apiErr) {
	var sc struct {
		Type   string          `json:"type"`
		ChatID json.RawMessage `json:"chat_id"`
		UserID int64           `json:"user_id"`
	}
	key := "default"
	if p.object("scope", &sc) {
		key = sc.Type
		if sc.ChatID != nil {
			cp := params{values: map[string]string{"chat_id": strings.Trim(string(sc.ChatID), `"`)}}
			c, e := s.chatFor(cp, "chat_id")
			if e != nil {
				return "", e
			}
			key += ":" + strconv.FormatInt(c.info.ID, 10)
		}
		if sc.UserID != 0 {
			key += ":" + strconv.FormatInt(sc.UserID, 10)
		}
	}
	if l := p.str("language_code"); l != "" {
		key += "/" + l
	}
	return key, nil
}

func (s *Server) setMyCommands(p params) (any, *apiErr) {
	var cmds []BotCommand
	p.object("commands", &cmds)
	if len(cmds) > 100 {
		return nil, badRequest("BOT_COMMANDS_TOO_MUCH")
	}
	for _, c := range cmds {
		if !commandName.MatchString(c.Command) {
			return nil, badRequest("BOT_COMMAND_INVALID")
		}
		if n := utf8.RuneCountInString(c.Description); n < 1 || n > 256 {
			return nil, badRequest("BOT_COMMAND_DESCRIPTION_INVALID")
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	key, e := s.scopeKey(p)
	if e != nil {
		return nil, e
	}
	s.commands[key] = cmds
	s.notify()
	return true, nil
}

func (s *Server) getMyCommands(p params) (any, *apiErr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key, e := s.scopeKey(p)
	if e != nil {
		return nil, e
	}
	out := append([]BotCommand{}, s.commands[key]...)
	return out, nil
}

func (s *Server) deleteMyCommands(p params) (any, *apiErr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key, e := s.scopeKey(p)
	if e != nil {
		return nil, e
	}
	delete(s.commands, key)
	s.notify()
	return true, nil
}

func (s *Server) getChat(p params) (any, *apiErr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, e := s.chatFor(p, "chat_id")
	if e != nil {
		return nil, e
	}
	return map[string]any{
		"id": c.info.ID, "type": c.info.Type, "title": c.info.Title, "is_forum": c.info.IsForum,
		"accent_color_id": 0, "max_reaction_count": 11,
		"accepted_gift_types": map[string]bool{
			"unlimited_gifts": true, "limited_gifts": true, "unique_gifts": true, "premium_subscription": true, "gifts_from_channels": true,
		},
	}, nil
}

func (s *Server) getChatMember(p params) (any, *apiErr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, e := s.chatFor(p, "chat_id")
	if e != nil {
		return nil, e
	}
	u := s.users[p.int("user_id")]
	if u == nil {
		return nil, stateErr("user not found")
	}
	status := c.members[u.ID]
	if status == "" {
		status = "left"
	}
	m := map[string]any{"status": status, "user": *u}
	if status == "administrator" {
		// The rights a bot needs to manage a forum's topics and messages.
		for _, right := range []string{"can_manage_chat", "can_delete_messages", "can_manage_topics", "can_invite_users", "can_change_info", "can_pin_messages"} {
			m[right] = true
		}
		m["can_manage_topics"] = !c.noTopics[u.ID]
		for _, right := range []string{"can_be_edited", "is_anonymous", "can_manage_video_chats", "can_restrict_members",
			"can_promote_members", "can_post_stories", "can_edit_stories", "can_delete_stories"} {
			m[right] = false
		}
	}
	if status == "creator" {
		m["is_anonymous"] = false
	}
	return m, nil
}

// Test side: set-up and reading what chats show.

// AddTopic opens a forum topic in the group, as a person would.
func (s *Server) AddTopic(name string) Topic {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, e := s.addTopic(s.chats[s.ChatID], name, 7322096)
	if e != nil {
		s.t.Fatalf("faketelegram: add topic %q: %s", name, e.desc)
	}
	return *t
}

// AddUser adds a person; member makes them a member of the group.
func (s *Server) AddUser(name string, member bool) User {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := &User{ID: 500000000 + s.ids.Add(1), FirstName: name, Username: strings.ToLower(name)}
	s.users[u.ID] = u
	if member {
		s.chats[s.ChatID].members[u.ID] = "member"
	}
	return *u
}

// AddPrivateChat opens u's private chat with the bot; its id is u's id.
func (s *Server) AddPrivateChat(u User) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.chats[u.ID] == nil {
		s.chats[u.ID] = &chat{
			info:    Chat{ID: u.ID, Type: "private", Username: u.Username},
			members: map[int64]string{u.ID: "member", s.Bot.ID: "member"},
			topics:  map[int64]*Topic{},
			byID:    map[int64]*Message{},
			nextID:  1,
		}
	}
	return u.ID
}

// WaitMessage waits for a message in any chat, deleted or not, that
// matches pred, and returns its latest state.
func (s *Server) WaitMessage(timeout time.Duration, pred func(Message) bool) (Message, bool) {
	var found Message
	ok := s.WaitFor(timeout, func() bool {
		for _, m := range s.allMessages() {
			if pred(m) {
				found = m
				return true
			}
		}
		return false
	})
	return found, ok
}

func (s *Server) allMessages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, c := range s.chats {
		for _, m := range c.messages {
			out = append(out, m.clone())
		}
	}
	return out
}

// Messages returns what a chat's topic shows (thread 0: the General topic),
// oldest first, without deleted messages.
func (s *Server) Messages(chatID, threadID int64) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chats[chatID]
	if c == nil {
		return nil
	}
	var out []Message
	for _, m := range c.messages {
		if !m.Deleted && m.MessageThreadID == threadID {
			out = append(out, m.clone())
		}
	}
	return out
}

// Message returns one message of a chat, deleted or not.
func (s *Server) Message(chatID, id int64) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.chats[chatID]; c != nil {
		if m := c.byID[id]; m != nil {
			return m.clone(), true
		}
	}
	return Message{}, false
}

// Topics returns a chat's forum topics.
func (s *Server) Topics(chatID int64) []Topic {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Topic
	if c := s.chats[chatID]; c != nil {
		for _, m := range c.messages {
			if t := c.topics[m.MessageID]; t != nil {
				out = append(out, *t)
			}
		}
	}
	return out
}

// Commands returns the commands set for a scope key (see scopeKey:
// "default", "chat:-1001234567890", ...).
func (s *Server) Commands(scope string) []BotCommand {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]BotCommand(nil), s.commands[scope]...)
}

// ChatActions returns every chat action sent, in order.
func (s *Server) ChatActions() []ChatAction {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ChatAction(nil), s.actions...)
}

// Answered returns a callback query's answer.
func (s *Server) Answered(queryID string) (Answer, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if q := s.queries[queryID]; q != nil && q.answered != nil {
		return *q.answered, true
	}
	return Answer{}, false
}

// File returns a stored file's bytes by file id.
func (s *Server) File(fileID string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.files[fileID]; f != nil {
		return append([]byte(nil), f.data...), true
	}
	return nil, false
}
