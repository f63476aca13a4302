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
// and a message id is Telegram's message_id as text (unique within its
// chat, so a topic's messages share the chat's numbering).

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

// MessageID formats a message_id.
func MessageID(id int64) string { return strconv.FormatInt(id, 10) }

// ParseMessage reads a message id.
func ParseMessage(id string) (int64, error) {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("telegram: %q is not a message id", id)
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
