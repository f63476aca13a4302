package faketelegram

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

const (
	maxText    = 4096 // message text, UTF-16 code units after entity parsing
	maxCaption = 1024
	maxData    = 64 // callback_data, bytes
	// maxPlaceholder is ForceReply's input_field_placeholder, characters.
	maxPlaceholder = 64
)

// chatFor resolves chat_id (an id or @username); caller holds s.mu.
func (s *Server) chatFor(p params, name string) (*chat, *apiErr) {
	v := p.str(name)
	if id, err := strconv.ParseInt(v, 10, 64); err == nil {
		if c := s.chats[id]; c != nil {
			if c.blocked {
				return nil, forbidden("bot was blocked by the user")
			}
			return c, nil
		}
		if s.users[id] != nil && id != s.Bot.ID {
			return nil, forbidden("bot can't initiate conversation with a user") // private.go
		}
	} else if u, ok := strings.CutPrefix(v, "@"); ok {
		for _, c := range s.chats {
			if c.info.Username != "" && strings.EqualFold(c.info.Username, u) {
				return c, nil
			}
		}
	}
	return nil, stateErr("chat not found")
}

// threadFor resolves message_thread_id in a chat; caller holds s.mu.
func (s *Server) threadFor(c *chat, p params) (int64, *apiErr) {
	if !p.has("message_thread_id") {
		return 0, nil
	}
	id := p.int("message_thread_id")
	if c.info.Type == "private" {
		return privateThread(c, id) // private_topics.go
	}
	if !c.info.IsForum {
		return 0, nil // Telegram ignores a topic outside forums
	}
	if c.topics[id] == nil {
		return 0, stateErr("message thread not found")
	}
	return id, nil
}

// formatted parses a text parameter with its parse_mode, or takes its
// entities as sent.
func formatted(p params, textParam, modeParam, entitiesParam string) (string, []Entity, *apiErr) {
	text := p.str(textParam)
	if mode := p.str(modeParam); mode != "" {
		plain, ents, msg := parseText(mode, text)
		if msg == "unsupported parse_mode" {
			return "", nil, badRequest(msg)
		}
		if msg != "" {
			return "", nil, badRequest("can't parse entities: " + msg)
		}
		plain, ents = trim(plain, ents)
		return plain, ents, nil
	}
	var ents []Entity
	p.object(entitiesParam, &ents)
	for _, e := range ents {
		if e.Offset < 0 || e.Length <= 0 || e.Offset+e.Length > utf16Len(text) {
			return "", nil, badRequest("can't parse entities: entity beyond the end of the text")
		}
	}
	text, ents = trim(text, ents)
	return text, ents, nil
}

// trim drops the whitespace around a text, as Telegram does, and moves
// or cuts the entities with it.
func trim(text string, ents []Entity) (string, []Entity) {
	const space = " \t\r\n"
	body := strings.TrimLeft(text, space)
	lead := utf16Len(text[:len(text)-len(body)])
	body = strings.TrimRight(body, space)
	n := utf16Len(body)
	var out []Entity
	for _, e := range ents {
		start, end := max(e.Offset-lead, 0), min(e.Offset+e.Length-lead, n)
		if end > start {
			e.Offset, e.Length = start, end-start
			out = append(out, e)
		}
	}
	return body, out
}

func checkText(text string) *apiErr {
	if strings.TrimSpace(text) == "" {
		return badRequest("message text is empty")
	}
	if utf16Len(text) > maxText {
		return badRequest("message is too long")
	}
	return nil
}

// markup reads reply_markup: an inline keyboard (checked by hand beyond
// the description: one action per button, callback_data 1–64 bytes) or a
// ForceReply.
func (s *Server) markup(p params) (*Keyboard, bool, *apiErr) {
	raw, ok := p.values["reply_markup"]
	if !ok {
		return nil, false, nil
	}
	var m struct {
		InlineKeyboard [][]map[string]any `json:"inline_keyboard"`
		ForceReply     bool               `json:"force_reply"`
		Placeholder    *string            `json:"input_field_placeholder"`
	}
	if json.Unmarshal([]byte(raw), &m) != nil {
		return nil, false, badRequest("can't parse reply keyboard markup JSON object")
	}
	// ForceReply.input_field_placeholder: "1-64 characters" (the
	// description; Telegram's own wording of the refusal is not published).
	if ph := m.Placeholder; ph != nil && (utf8.RuneCountInString(*ph) < 1 || utf8.RuneCountInString(*ph) > maxPlaceholder) {
		return nil, false, badRequest("input_field_placeholder must be 1-64 characters")
	}
	if m.InlineKeyboard == nil {
		return nil, m.ForceReply, nil
	}
	// "Exactly one of the fields other than text, icon_custom_emoji_id, and
	// style must be used": the others are the button's actions.
	action := map[string]bool{}
	for _, f := range s.api.Types["InlineKeyboardButton"].Fields {
		action[f.Name] = f.Name != "text" && f.Name != "icon_custom_emoji_id" && f.Name != "style"
	}
	k := &Keyboard{}
	for _, row := range m.InlineKeyboard {
		var out []Button
		for _, b := range row {
			actions := 0
			for name := range b {
				if action[name] {
					actions++
				}
			}
			if actions == 0 {
				return nil, false, badRequest("can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard")
			}
			if actions > 1 {
				return nil, false, badRequest("can't parse inline keyboard button: exactly one of the fields other than text, icon_custom_emoji_id and style must be used")
			}
			btn := Button{}
			btn.Text, _ = b["text"].(string)
			btn.URL, _ = b["url"].(string)
			btn.Style, _ = b["style"].(string)
			if d, ok := b["callback_data"]; ok {
				btn.CallbackData, _ = d.(string)
				if n := len(btn.CallbackData); n < 1 || n > maxData {
					return nil, false, badRequest("BUTTON_DATA_INVALID")
				}
			}
			out = append(out, btn)
		}
		k.InlineKeyboard = append(k.InlineKeyboard, out)
	}
	return k, false, nil
}

// post stores a message the bot sends; caller holds s.mu.
func (s *Server) post(c *chat, thread int64, m *Message) *Message {
	m.MessageID = c.nextID
	c.nextID++
	m.MessageThreadID = thread
	m.IsTopicMessage = thread != 0
	m.Chat = c.info
	m.Date = time.Now().Unix()
	c.messages = append(c.messages, m)
	c.byID[m.MessageID] = m
	s.notify()
	return m
}

// replyTarget resolves reply_parameters; caller holds s.mu.
func (s *Server) replyTarget(c *chat, p params) (*Message, *apiErr) {
	var rp struct {
		MessageID int64 `json:"message_id"`
		AllowSend bool  `json:"allow_sending_without_reply"`
	}
	if !p.object("reply_parameters", &rp) {
		return nil, nil
	}
	m := c.byID[rp.MessageID]
	if m == nil || m.Deleted {
		if rp.AllowSend {
			return nil, nil
		}
		return nil, stateErr("message to be replied not found")
	}
	return m, nil
}

func (s *Server) getMe(params) (any, *apiErr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return map[string]any{"has_topics_enabled": s.privateTopics,
		"id": s.Bot.ID, "is_bot": true, "first_name": s.Bot.FirstName, "username": s.Bot.Username,
		"can_join_groups": true, "can_read_all_group_messages": false, "supports_inline_queries": false,
	}, nil
}

func (s *Server) sendMessage(p params) (any, *apiErr) {
	text, ents, e := formatted(p, "text", "parse_mode", "entities")
	if e != nil {
		return nil, e
	}
	if e := checkText(text); e != nil {
		return nil, e
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
	m := &Message{From: &s.Bot, Text: text, Entities: ents, ReplyMarkup: kb, ForceReply: force}
	if reply != nil {
		r := reply.clone()
		r.ReplyToMessage = nil
		m.ReplyToMessage = &r
	}
	return s.post(c, thread, m).clone(), nil
}

// editable finds a bot's message by chat_id and message_id; caller holds s.mu.
func (s *Server) editable(p params, missing string) (*Message, *apiErr) {
	if p.has("inline_message_id") {
		return nil, badRequest("inline messages are not modelled by the fake")
	}
	if !p.has("chat_id") {
		return nil, badRequest("chat_id is empty")
	}
	if !p.has("message_id") {
		return nil, badRequest("message identifier is not specified")
	}
	c, e := s.chatFor(p, "chat_id")
	if e != nil {
		return nil, e
	}
	m := c.byID[p.int("message_id")]
	if m == nil || m.Deleted {
		return nil, stateErr(missing)
	}
	if m.From == nil || m.From.ID != s.Bot.ID {
		return nil, stateErr("message can't be edited")
	}
	return m, nil
}

const notModified = "message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message"

func (s *Server) editMessageText(p params) (any, *apiErr) {
	text, ents, e := formatted(p, "text", "parse_mode", "entities")
	if e != nil {
		return nil, e
	}
	if e := checkText(text); e != nil {
		return nil, e
	}
	// Without reply_markup an edit drops the message's inline keyboard.
	kb, _, e := s.markup(p)
	if e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, e := s.editable(p, "message to edit not found")
	if e != nil {
		return nil, e
	}
	if m.Text == text && reflect.DeepEqual(m.Entities, ents) && reflect.DeepEqual(m.ReplyMarkup, kb) {
		return nil, stateErr(notModified)
	}
	m.Edits = append(m.Edits, m.Text)
	m.Text, m.Entities, m.ReplyMarkup = text, ents, kb
	m.EditDate = time.Now().Unix()
	s.notify()
	return m.clone(), nil
}

func (s *Server) editMessageReplyMarkup(p params) (any, *apiErr) {
	kb, _, e := s.markup(p)
	if e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, e := s.editable(p, "message to edit not found")
	if e != nil {
		return nil, e
	}
	if reflect.DeepEqual(m.ReplyMarkup, kb) {
		return nil, stateErr(notModified)
	}
	m.ReplyMarkup = kb
	m.EditDate = time.Now().Unix()
	s.notify()
	return m.clone(), nil
}

func (s *Server) deleteMessage(p params) (any, *apiErr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, e := s.chatFor(p, "chat_id")
	if e != nil {
		return nil, e
	}
	m := c.byID[p.int("message_id")]
	if m == nil || m.Deleted {
		return nil, stateErr("message to delete not found")
	}
	if (m.From == nil || m.From.ID != s.Bot.ID) && c.members[s.Bot.ID] != "administrator" {
		return nil, stateErr("message can't be deleted")
	}
	m.Deleted = true
	s.notify()
	return true, nil
}

var chatActions = map[string]bool{
	"typing": true, "upload_photo": true, "record_video": true, "upload_video": true, "record_voice": true,
	"upload_voice": true, "upload_document": true, "choose_sticker": true, "find_location": true,
	"record_video_note": true, "upload_video_note": true,
}

func (s *Server) sendChatAction(p params) (any, *apiErr) {
	if !chatActions[p.str("action")] {
		return nil, badRequest("wrong parameter action in request")
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
	s.actions = append(s.actions, ChatAction{ChatID: c.info.ID, ThreadID: thread, Action: p.str("action"), At: time.Now()})
	s.notify()
	return true, nil
}

func (s *Server) setMessageReaction(p params) (any, *apiErr) {
	var rs []struct {
		Type  string `json:"type"`
		Emoji string `json:"emoji"`
	}
	p.object("reaction", &rs)
	// A bot is not a Premium user: one reaction per message.
	if len(rs) > 1 {
		return nil, badRequest("REACTIONS_TOO_MANY")
	}
	var set []string
	for _, r := range rs {
		if r.Type != "emoji" || !s.api.reactions[r.Emoji] {
			return nil, badRequest("REACTION_INVALID")
		}
		set = append(set, r.Emoji)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, e := s.chatFor(p, "chat_id")
	if e != nil {
		return nil, e
	}
	m := c.byID[p.int("message_id")]
	if m == nil || m.Deleted {
		return nil, stateErr("message to react not found")
	}
	m.Reactions = set
	s.notify()
	return true, nil
}

func (s *Server) answerCallbackQuery(p params) (any, *apiErr) {
	if utf16Len(p.str("text")) > 200 {
		return nil, badRequest("MESSAGE_TOO_LONG")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.queries[p.str("callback_query_id")]
	if q == nil || q.answered != nil || time.Since(q.created) > s.CallbackQueryTTL {
		return nil, stateErr("query is too old and response timeout expired or query ID is invalid")
	}
	q.answered = &Answer{Text: p.str("text"), ShowAlert: p.bool("show_alert"), At: time.Now()}
	s.notify()
	return true, nil
}
