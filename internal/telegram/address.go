package telegram

import (
	"fmt"
	"strconv"
	"strings"
)

// Addresses. The core names a channel by one string and a message by
// another; on Telegram a channel is a chat, or a forum topic of one:
//
//	"<chat_id>"            the chat itself (a forum's General topic)
//	"<chat_id>.<topic_id>" a forum topic: message_thread_id on every send
//
// and a message id is "<message_id>@<chat_id>": Telegram numbers messages
// per chat, and the core keys its records by message id (the guard's
// bindings, a card's request), which two groups would otherwise share.
// The message comes first so the id is a valid record key (it starts with
// a digit) and, within one chat, ids still order by value as the core's
// catch-up compares them (state.SnowflakeLess: length, then text).

// Place is a chat and, in a forum, one of its topics (0: General).
type Place struct {
	Chat  int64
	Topic int64
}

// ChannelID is the core's name of a place.
func (p Place) ChannelID() string { return ChannelID(p.Chat, p.Topic) }

// ChannelID formats a chat and topic (0: none) as a channel id.
func ChannelID(chatID, topicID int64) string {
	if topicID == 0 {
		return strconv.FormatInt(chatID, 10)
	}
	return strconv.FormatInt(chatID, 10) + "." + strconv.FormatInt(topicID, 10)
}

// ParseChannel reads a channel id made by ChannelID.
func ParseChannel(id string) (Place, error) {
	chatText, topicText, hasTopic := strings.Cut(id, ".")
	chatID, err := strconv.ParseInt(chatText, 10, 64)
	if err != nil || chatID == 0 {
		return Place{}, fmt.Errorf("telegram: %q is not a chat id or <chat_id>.<topic_id>", id)
	}
	if !hasTopic {
		return Place{Chat: chatID}, nil
	}
	topicID, err := strconv.ParseInt(topicText, 10, 64)
	if err != nil || topicID <= 0 {
		return Place{}, fmt.Errorf("telegram: %q has no valid topic id", id)
	}
	return Place{Chat: chatID, Topic: topicID}, nil
}

// MessageID formats a message of a chat.
func MessageID(chatID, id int64) string {
	return strconv.FormatInt(id, 10) + "@" + strconv.FormatInt(chatID, 10)
}

// ParseMessage reads a message id made by MessageID; chatID is 0 for a
// bare message_id (no chat named).
func ParseMessage(id string) (chatID, messageID int64, err error) {
	msgText, chatText, qualified := strings.Cut(id, "@")
	n, err := strconv.ParseInt(msgText, 10, 64)
	if err != nil || n <= 0 {
		return 0, 0, fmt.Errorf("telegram: %q is not a message id", id)
	}
	if !qualified {
		return 0, n, nil
	}
	c, err := strconv.ParseInt(chatText, 10, 64)
	if err != nil || c == 0 {
		return 0, 0, fmt.Errorf("telegram: %q names no chat", id)
	}
	return c, n, nil
}

// message reads a message id of p's chat: one of another chat is refused,
// never taken as the message of this chat that has its number.
func (p Place) message(id string) (int64, error) {
	c, n, err := ParseMessage(id)
	if err != nil {
		return 0, err
	}
	if c != 0 && c != p.Chat {
		return 0, fmt.Errorf("telegram: message %s is not of chat %d", id, p.Chat)
	}
	return n, nil
}

// target is the chat_id and message_thread_id parameters of a send.
func (p Place) target(params map[string]any) map[string]any {
	params["chat_id"] = p.Chat
	if p.Topic != 0 {
		params["message_thread_id"] = p.Topic
	}
	return params
}
