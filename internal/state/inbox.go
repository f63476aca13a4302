package state

import (
	"encoding/json"
	"time"
)

// Inbox is what a platform that keeps no history a bot may read back
// (Telegram) delivered to one channel: each owner message is written here
// before the platform is told it was received, and catch-up reads it back
// as it reads Discord's history. Keyed by CursorKey, in the durable
// directory.
type Inbox struct {
	Server    string     `json:"server"`
	ChannelID string     `json:"channel_id"`
	Messages  []Received `json:"messages,omitempty"` // by id, oldest first
}

// Received is one message kept in an inbox.
type Received struct {
	ID    string          `json:"id"`
	At    time.Time       `json:"at"`              // when it was sent
	Event json.RawMessage `json:"event"`           // the front end's event, as the intake wrote it
	Marks []string        `json:"marks,omitempty"` // the emoji the bot reacted with
}

const inboxVersion = 1

// OpenInboxes opens the inboxes in a durable directory (see OpenRegistry).
func OpenInboxes(d *Dir) (*Collection[Inbox], error) {
	return newCollection[Inbox](d, "inbox", inboxVersion)
}
