package faketelegram

import (
	"encoding/json"
	"slices"
	"time"
)

// User is a Telegram user or bot.
type User struct {
	ID        int64  `json:"id"`
	IsBot     bool   `json:"is_bot"`
	FirstName string `json:"first_name"`
	Username  string `json:"username,omitempty"`
}

// Chat is the short form of a chat inside a message.
type Chat struct {
	ID       int64  `json:"id"`
	Type     string `json:"type"`
	Title    string `json:"title,omitempty"`
	Username string `json:"username,omitempty"`
	IsForum  bool   `json:"is_forum,omitempty"`
}

// Button is an InlineKeyboardButton; the fake keeps the fields a bot sends
// and hands the rest back as it got them.
type Button struct {
	Text         string `json:"text"`
	CallbackData string `json:"callback_data,omitempty"`
	URL          string `json:"url,omitempty"`
	Style        string `json:"style,omitempty"`
}

// Keyboard is an InlineKeyboardMarkup.
type Keyboard struct {
	InlineKeyboard [][]Button `json:"inline_keyboard"`
}

// Document is a sent or received file.
type Document struct {
	FileID       string `json:"file_id"`
	FileUniqueID string `json:"file_unique_id"`
	FileName     string `json:"file_name,omitempty"`
	MimeType     string `json:"mime_type,omitempty"`
	FileSize     int    `json:"file_size,omitempty"`
}

// Voice is a voice note.
type Voice struct {
	FileID       string `json:"file_id"`
	FileUniqueID string `json:"file_unique_id"`
	Duration     int    `json:"duration"`
	MimeType     string `json:"mime_type,omitempty"`
	FileSize     int    `json:"file_size,omitempty"`
}

// PhotoSize is one size of a photo; the fake keeps one.
type PhotoSize struct {
	FileID       string `json:"file_id"`
	FileUniqueID string `json:"file_unique_id"`
	Width        int    `json:"width"`
	Height       int    `json:"height"`
	FileSize     int    `json:"file_size,omitempty"`
}

// ForumTopicCreated is the service message that opens a topic.
type ForumTopicCreated struct {
	Name      string `json:"name"`
	IconColor int    `json:"icon_color"`
}

// Message is a message as a chat shows it. The fields without a JSON name
// are the fake's record of what happened to it.
type Message struct {
	MessageID         int64              `json:"message_id"`
	MessageThreadID   int64              `json:"message_thread_id,omitempty"`
	IsTopicMessage    bool               `json:"is_topic_message,omitempty"`
	From              *User              `json:"from,omitempty"`
	Chat              Chat               `json:"chat"`
	Date              int64              `json:"date"`
	EditDate          int64              `json:"edit_date,omitempty"`
	ReplyToMessage    *Message           `json:"reply_to_message,omitempty"`
	Text              string             `json:"text,omitempty"`
	Entities          []Entity           `json:"entities,omitempty"`
	Caption           string             `json:"caption,omitempty"`
	CaptionEntities   []Entity           `json:"caption_entities,omitempty"`
	Document          *Document          `json:"document,omitempty"`
	Photo             []PhotoSize        `json:"photo,omitempty"`
	Voice             *Voice             `json:"voice,omitempty"`
	ForumTopicCreated *ForumTopicCreated `json:"forum_topic_created,omitempty"`
	// ForumTopicClosed and ForumTopicReopened hold no information.
	ForumTopicClosed   *struct{} `json:"forum_topic_closed,omitempty"`
	ForumTopicReopened *struct{} `json:"forum_topic_reopened,omitempty"`
	ReplyMarkup        *Keyboard `json:"reply_markup,omitempty"`

	// ForceReply: the bot asked the client to reply to this message.
	ForceReply bool `json:"-"`
	// Reactions are the bot's reactions on the message.
	Reactions []string `json:"-"`
	// Edits are the earlier texts (or captions), oldest first.
	Edits []string `json:"-"`
	// Deleted: deleteMessage removed it; chats no longer show it.
	Deleted bool `json:"-"`
}

// clone copies a message deeply enough that the caller may keep it.
func (m *Message) clone() Message {
	c := *m
	c.Entities = slices.Clone(m.Entities)
	c.CaptionEntities = slices.Clone(m.CaptionEntities)
	c.Reactions = slices.Clone(m.Reactions)
	c.Edits = slices.Clone(m.Edits)
	c.Photo = slices.Clone(m.Photo)
	if m.ReplyMarkup != nil {
		k := Keyboard{}
		for _, row := range m.ReplyMarkup.InlineKeyboard {
			k.InlineKeyboard = append(k.InlineKeyboard, slices.Clone(row))
		}
		c.ReplyMarkup = &k
	}
	if m.ReplyToMessage != nil {
		r := m.ReplyToMessage.clone()
		c.ReplyToMessage = &r
	}
	if m.Document != nil {
		d := *m.Document
		c.Document = &d
	}
	if m.Voice != nil {
		v := *m.Voice
		c.Voice = &v
	}
	return c
}

// Topic is a forum topic.
type Topic struct {
	MessageThreadID int64  `json:"message_thread_id"`
	Name            string `json:"name"`
	IconColor       int    `json:"icon_color"`
}

// BotCommand is one entry of setMyCommands.
type BotCommand struct {
	Command     string `json:"command"`
	Description string `json:"description"`
}

// ChatAction is one sendChatAction call.
type ChatAction struct {
	ChatID   int64
	ThreadID int64
	Action   string
	At       time.Time
}

// CallbackQuery is a press of an inline keyboard button.
type CallbackQuery struct {
	ID           string   `json:"id"`
	From         User     `json:"from"`
	Message      *Message `json:"message,omitempty"`
	ChatInstance string   `json:"chat_instance"`
	Data         string   `json:"data,omitempty"`
}

// Answer is a bot's answerCallbackQuery.
type Answer struct {
	Text      string
	ShowAlert bool
	At        time.Time
}

// Call is one Bot API request the fake received.
type Call struct {
	Method string            // as the description spells it (sendMessage), or as sent when unknown
	Params map[string]string // top-level values as Telegram reads them; uploads as "<file NAME, N bytes>"
	Status int
	// Description is Telegram's error text for a refused call.
	Description string
	At          time.Time
}

// Error is an error answer a hook returns.
type Error struct {
	Code        int // HTTP status and error_code
	Description string
	RetryAfter  int // seconds, sent as parameters.retry_after when > 0
}

type chat struct {
	info    Chat
	members map[int64]string // user id → status (creator, administrator, member)
	topics  map[int64]*Topic
	closed  map[int64]bool // topics closed (closeForumTopic)
	// noTopics are administrators without can_manage_topics.
	noTopics map[int64]bool
	messages []*Message
	byID     map[int64]*Message
	nextID   int64
	// blocked: a private chat whose person blocked the bot (private.go).
	blocked bool
}

type update struct {
	id   int64
	kind string // message, callback_query, ...
	body json.RawMessage
}

type query struct {
	created  time.Time
	answered *Answer
}

type storedFile struct {
	id, uniqueID, path string
	data               []byte
}
