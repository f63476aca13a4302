package state

import (
	"encoding/json"
	"strings"
	"time"
)

// What the Telegram front end keeps beside the other records: the Bot API
// has no history, no custom_id longer than 64 bytes and no thread parent,
// so ccbridge remembers these itself.

// TelegramDrawn is what ccbridge drew on one of its Telegram messages with
// an inline keyboard: the content and rows as the core gave them (JSON of
// chat.Message's Content and Rows) and the hash of that face. A button's
// callback_data is a short token that names the face hash and the
// button's place, resolved through this record; keyed by
// TelegramDrawnKey. Records are pruned by age (see internal/telegram).
type TelegramDrawn struct {
	Server    string          `json:"server"`
	ChannelID string          `json:"channel_id"`
	MessageID string          `json:"message_id"`
	Face      string          `json:"face"` // the token prefix every button of this drawing carries
	Content   string          `json:"content"`
	Rows      json.RawMessage `json:"rows"` // []chat.Row
	Drawn     time.Time       `json:"drawn"`
	// AskedIn is set on an answer sent to one person's private chat: the
	// channel it was asked in, where its click acts. Used: it was
	// clicked; such an answer acts once.
	AskedIn string `json:"asked_in,omitempty"`
	Used    bool   `json:"used,omitempty"`
}

// TelegramDrawnKey is the record key of a message of a chat drawn by
// server's bot. A group's message ids are the group's own; a private
// chat's id is the person's for every bot, and each bot numbers its
// messages there, so its key names the server too.
func TelegramDrawnKey(server, chatID, messageID string) string {
	if strings.HasPrefix(chatID, "-") {
		return "m" + chatID + "_" + messageID
	}
	return "m" + chatID + "_" + messageID + "_" + server
}

// TelegramForm is a form ccbridge asked in a topic and waits on: a reply
// to its prompt is the answer to its next input, whichever process takes
// it. Form is the front end's record of it (JSON: the form, its answers so
// far, the card that opened it); keyed by TelegramFormKey of the prompt.
type TelegramForm struct {
	Server  string          `json:"server"`
	Expires time.Time       `json:"expires"`
	Form    json.RawMessage `json:"form"`
}

// TelegramFormKey is the record key of a form's prompt, a message of a chat.
func TelegramFormKey(chatID, messageID string) string { return "f" + chatID + "_" + messageID }

// TelegramTopic is a forum topic ccbridge opened as a thread of a
// project's topic (or General): Telegram topics have no parent, and the
// core needs it. Keyed by "t" + the topic's channel id.
type TelegramTopic struct {
	Server    string    `json:"server"`
	ChannelID string    `json:"channel_id"`
	ParentID  string    `json:"parent_id"`
	Name      string    `json:"name"`
	Created   time.Time `json:"created"`
	Closed    bool      `json:"closed,omitempty"`
}

// TelegramOffset is the next getUpdates offset of a bot: every update
// below it was handed over and confirmed. Keyed by server name.
type TelegramOffset struct {
	Next    int64     `json:"next"`
	Updated time.Time `json:"updated"`
}

// TelegramJournal is what owners sent to one channel of a Telegram bot,
// kept as it was handed to the core: the Bot API has no history, so
// catch-up reads this instead. Keyed by "j" + server + "@" + channel id;
// entries oldest first, pruned by age and count.
type TelegramJournal struct {
	Server    string          `json:"server"`
	ChannelID string          `json:"channel_id"`
	Entries   []TelegramEntry `json:"entries"`
}

// TelegramEntry is one message of a journal.
type TelegramEntry struct {
	MessageID string          `json:"message_id"`
	At        time.Time       `json:"at"`
	Event     json.RawMessage `json:"event"` // chat.MessageEvent
	// Marked are ccbridge's marks set on it (✅, ⚠️, …), as the core
	// wrote them, whatever emoji Telegram showed for them.
	Marked []string `json:"marked,omitempty"`
}

const telegramVersion = 1

// Telegram is the Telegram front end's collections.
type Telegram struct {
	Drawn   *Collection[TelegramDrawn]
	Topics  *Collection[TelegramTopic]
	Offsets *Collection[TelegramOffset]
	Journal *Collection[TelegramJournal]
	Forms   *Collection[TelegramForm]
}

// OpenTelegram opens the Telegram front end's records in a durable
// directory (see OpenRegistry).
func OpenTelegram(d *Dir) (*Telegram, error) {
	var t Telegram
	var err error
	if t.Drawn, err = newCollection[TelegramDrawn](d, "telegram-drawn", telegramVersion); err != nil {
		return nil, err
	}
	if t.Topics, err = newCollection[TelegramTopic](d, "telegram-topics", telegramVersion); err != nil {
		return nil, err
	}
	if t.Offsets, err = newCollection[TelegramOffset](d, "telegram-offsets", telegramVersion); err != nil {
		return nil, err
	}
	if t.Journal, err = newCollection[TelegramJournal](d, "telegram-journal", telegramVersion); err != nil {
		return nil, err
	}
	if t.Forms, err = newCollection[TelegramForm](d, "telegram-forms", telegramVersion); err != nil {
		return nil, err
	}
	return &t, nil
}
