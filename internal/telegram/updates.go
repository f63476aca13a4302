package telegram

import (
	"strconv"
	"strings"

	"github.com/ccbridge/ccbridge/internal/chat"
)

// The parts of the Bot API's Update ccbridge reads.

type update struct {
	UpdateID      int64          `json:"update_id"`
	Message       *inMessage     `json:"message"`
	CallbackQuery *callbackQuery `json:"callback_query"`
}

type user struct {
	ID        int64  `json:"id"`
	IsBot     bool   `json:"is_bot"`
	FirstName string `json:"first_name"`
	Username  string `json:"username"`
	// HasTopicsEnabled is getMe's: the bot's topic mode in private chats.
	HasTopicsEnabled bool `json:"has_topics_enabled"`
}

func (u user) chatUser() chat.User {
	name := u.Username
	if name == "" {
		name = u.FirstName
	}
	return chat.User{ID: strconv.FormatInt(u.ID, 10), Name: name, Bot: u.IsBot}
}

type entity struct {
	Type   string `json:"type"`
	Offset int    `json:"offset"`
	Length int    `json:"length"`
}

type inMessage struct {
	MessageID       int64 `json:"message_id"`
	MessageThreadID int64 `json:"message_thread_id"`
	IsTopicMessage  bool  `json:"is_topic_message"`
	From            *user `json:"from"`
	Chat            struct {
		ID      int64  `json:"id"`
		Type    string `json:"type"`
		IsForum bool   `json:"is_forum"`
	} `json:"chat"`
	Date           int64      `json:"date"`
	ReplyToMessage *inMessage `json:"reply_to_message"`
	Text           string     `json:"text"`
	Entities       []entity   `json:"entities"`
	Caption        string     `json:"caption"`
	Document       *struct {
		FileID   string `json:"file_id"`
		FileName string `json:"file_name"`
		MimeType string `json:"mime_type"`
		FileSize int    `json:"file_size"`
	} `json:"document"`
	Photo []struct {
		FileID       string `json:"file_id"`
		FileUniqueID string `json:"file_unique_id"`
		Width        int    `json:"width"`
		Height       int    `json:"height"`
		FileSize     int    `json:"file_size"`
	} `json:"photo"`
	Voice *struct {
		FileID   string `json:"file_id"`
		Duration int    `json:"duration"`
		MimeType string `json:"mime_type"`
		FileSize int    `json:"file_size"`
	} `json:"voice"`
	ReplyMarkup *Keyboard `json:"reply_markup"`
	// Service messages of a topic closed or reopened (they hold nothing).
	ForumTopicClosed   *struct{} `json:"forum_topic_closed"`
	ForumTopicReopened *struct{} `json:"forum_topic_reopened"`
}

// place is where the message is: its chat, and its topic in a forum (a
// message of General, or of a chat that is no forum, has none).
func (m *inMessage) place() Place {
	p := Place{Chat: m.Chat.ID}
	if m.IsTopicMessage && m.MessageThreadID != 0 {
		p.Topic = m.MessageThreadID
	}
	return p
}

// written reports whether a person wrote something in it: service
// messages (a topic created, closed, renamed; a member joined) carry
// none of these.
func (m *inMessage) written() bool {
	return m.Text != "" || m.Caption != "" || m.Document != nil || len(m.Photo) > 0 || m.Voice != nil
}

// attachments are the message's files, by a URL Poster.Download reads.
func (m *inMessage) attachments() (atts []chat.Attachment, flags int) {
	if d := m.Document; d != nil {
		name := d.FileName
		if name == "" {
			name = "document"
		}
		atts = append(atts, chat.Attachment{Name: name, URL: FileURL(d.FileID), Size: d.FileSize, ContentType: d.MimeType})
	}
	if len(m.Photo) > 0 {
		best := m.Photo[0]
		for _, ph := range m.Photo[1:] {
			if ph.Width*ph.Height > best.Width*best.Height {
				best = ph
			}
		}
		atts = append(atts, chat.Attachment{Name: "photo_" + best.FileUniqueID + ".jpg", URL: FileURL(best.FileID), Size: best.FileSize, ContentType: "image/jpeg"})
	}
	if v := m.Voice; v != nil {
		mt := v.MimeType
		if mt == "" {
			mt = "audio/ogg"
		}
		atts = append(atts, chat.Attachment{Name: "voice.ogg", URL: FileURL(v.FileID), Size: v.FileSize, ContentType: mt, DurationSecs: float64(v.Duration)})
		flags |= chat.FlagVoiceMessage
	}
	return atts, flags
}

// command reads a bot command at the start of the text: its name (lower
// case) and the text after it. foreign: the command is addressed to
// another bot (/cmd@otherbot).
func (m *inMessage) command(botName string) (name, rest string, ok, foreign bool) {
	if len(m.Entities) == 0 || m.Entities[0].Type != "bot_command" || m.Entities[0].Offset != 0 {
		return "", "", false, false
	}
	word, rest, _ := strings.Cut(m.Text, " ")
	if nl := strings.IndexByte(word, '\n'); nl >= 0 {
		word, rest = word[:nl], m.Text[nl+1:]
	}
	word = strings.TrimPrefix(word, "/")
	word, to, addressed := strings.Cut(word, "@")
	if addressed && !strings.EqualFold(to, botName) {
		return "", "", false, true
	}
	return strings.ToLower(word), strings.TrimSpace(rest), word != "", false
}

type callbackQuery struct {
	ID      string     `json:"id"`
	From    user       `json:"from"`
	Message *inMessage `json:"message"`
	Data    string     `json:"data"`
}
