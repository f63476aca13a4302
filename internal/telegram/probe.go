package telegram

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// What setup and doctor ask the Bot API about a bot, its group and the
// people in it, outside a running Bot.

// Identity is a user or bot as getMe and getChatMember name it.
type Identity struct {
	ID        int64  `json:"id"`
	IsBot     bool   `json:"is_bot"`
	FirstName string `json:"first_name"`
	Username  string `json:"username"`
}

// Label is @username when there is one, else the first name.
func (u Identity) Label() string {
	if u.Username != "" {
		return "@" + u.Username
	}
	return u.FirstName
}

// ChatInfo is what getChat says of a chat.
type ChatInfo struct {
	ID      int64  `json:"id"`
	Type    string `json:"type"` // private, group, supergroup, channel
	Title   string `json:"title"`
	IsForum bool   `json:"is_forum"`
}

// Forum reports whether the chat has topics: a supergroup with Topics on.
func (c ChatInfo) Forum() bool { return c.Type == "supergroup" && c.IsForum }

// Member is what getChatMember says of a user in a chat.
type Member struct {
	Status          string `json:"status"` // creator, administrator, member, restricted, left, kicked
	IsMember        bool   `json:"is_member"`
	CanManageTopics bool   `json:"can_manage_topics"`
}

// In reports whether the user is in the chat (a restricted user may be).
func (m Member) In() bool {
	switch m.Status {
	case "creator", "administrator", "member":
		return true
	case "restricted":
		return m.IsMember
	}
	return false
}

// ManagesTopics reports whether the user may create and edit topics: the
// creator, or an administrator granted Manage topics.
func (m Member) ManagesTopics() bool {
	return m.Status == "creator" || (m.Status == "administrator" && m.CanManageTopics)
}

// Me is getMe: who the token's bot is.
func (c *Client) Me(ctx context.Context) (Identity, error) {
	var me Identity
	err := c.call(ctx, "getMe", map[string]any{}, &me, true)
	return me, err
}

// Chat is getChat.
func (c *Client) Chat(ctx context.Context, chatID int64) (ChatInfo, error) {
	var ch ChatInfo
	err := c.call(ctx, "getChat", map[string]any{"chat_id": chatID}, &ch, true)
	return ch, err
}

// ChatMember is getChatMember.
func (c *Client) ChatMember(ctx context.Context, chatID, userID int64) (Member, error) {
	var m Member
	err := c.call(ctx, "getChatMember", map[string]any{"chat_id": chatID, "user_id": userID}, &m, true)
	return m, err
}

// CreateTopic is createForumTopic; it returns the topic's message_thread_id.
// It is not retried after a send that may have arrived: a second would be a
// second topic.
func (c *Client) CreateTopic(ctx context.Context, chatID int64, name string) (int64, error) {
	var t struct {
		MessageThreadID int64 `json:"message_thread_id"`
	}
	if err := c.call(ctx, "createForumTopic", map[string]any{"chat_id": chatID, "name": name}, &t, false); err != nil {
		return 0, err
	}
	return t.MessageThreadID, nil
}

// Sighting is a message a person sent where the bot sees it.
type Sighting struct {
	UpdateID int64
	From     Identity
	Chat     ChatInfo
}

// Sightings is one getUpdates from offset (0: from the oldest kept),
// waiting up to wait (whole seconds; less is a short poll): the people's
// messages it holds, and the offset that confirms everything it returned.
// Confirming is the caller's next call with that offset.
func (c *Client) Sightings(ctx context.Context, offset int64, wait time.Duration) (seen []Sighting, next int64, err error) {
	params := map[string]any{"timeout": int(wait / time.Second)}
	if offset > 0 {
		params["offset"] = offset
	}
	var ups []update
	if err := c.once(ctx, "getUpdates", params, &ups); err != nil {
		return nil, offset, err
	}
	next = offset
	for _, u := range ups {
		next = max(next, u.UpdateID+1)
		m := u.Message
		if m == nil || m.From == nil || m.From.IsBot {
			continue
		}
		seen = append(seen, Sighting{
			UpdateID: u.UpdateID,
			From:     Identity{ID: m.From.ID, FirstName: m.From.FirstName, Username: m.From.Username},
			Chat:     ChatInfo{ID: m.Chat.ID, Type: m.Chat.Type, IsForum: m.Chat.IsForum},
		})
	}
	return seen, next, nil
}

// Confirm confirms every update below offset without taking any: a
// getUpdates that asks for none of what follows (limit 1, no wait) and
// whose one update, if any, stays unconfirmed for the next reader.
func (c *Client) Confirm(ctx context.Context, offset int64) error {
	if offset <= 0 {
		return nil
	}
	return c.once(ctx, "getUpdates", map[string]any{"offset": offset, "limit": 1, "timeout": 0}, nil)
}

// IsConflict reports Telegram's 409: another process polls the bot's
// updates (a running daemon) or the bot has a webhook.
func IsConflict(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Code == http.StatusConflict
}

// IsRefusedToken reports an answer that means the token is not a bot's:
// 401, or the 404 Telegram gives a token of the wrong shape.
func IsRefusedToken(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && (ae.Code == http.StatusUnauthorized || ae.Code == http.StatusNotFound)
}

// Refusal is Telegram's own words for a refused call ("" for none).
func Refusal(err error) string {
	var ae *APIError
	if errors.As(err, &ae) {
		return strconv.Itoa(ae.Code) + " " + ae.Description
	}
	return ""
}

// ParseChatID reads a chat id as the config writes it.
func ParseChatID(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id == 0 {
		return 0, fmt.Errorf("telegram: %q is not a chat id", s)
	}
	return id, nil
}
