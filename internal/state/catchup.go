package state

import "time"

// Cursor is what catch-up knows of one channel or thread, kept in the
// durable directory (it must survive a reboot): the last message handled
// there, the messages in flight that newer ones may pass, the message typed
// into Claude's pane whose receipt was not yet recorded, and the Deliver
// anyway offers made for messages missed too long ago. Keyed by CursorKey.
type Cursor struct {
	Server    string `json:"server"`
	ChannelID string `json:"channel_id"`
	ParentID  string `json:"parent_id,omitempty"` // a thread's parent channel
	// Last is the id of the newest message handled: every message of the
	// channel up to it was delivered (its ✅ recorded), told it could not
	// be, or was none of ccbridge's business.
	Last string `json:"last,omitempty"`
	// Held are the messages claimed but not handled yet that newer ones
	// may pass (a voice note being transcribed or reviewed, a Deliver
	// anyway message queued behind newer ones), by id: Last moves past
	// them, so catch-up reads each one back by id.
	Held map[string]Held `json:"held,omitempty"`
	// Typed is a message pasted into the pane whose receipt was not yet
	// recorded: after a crash, catch-up asks what Claude received before
	// typing it again.
	Typed *Typed `json:"typed,omitempty"`
	// Offers are the Deliver anyway offers, by message id.
	Offers  map[string]Offer `json:"offers,omitempty"`
	Updated time.Time        `json:"updated"`
}

// Typed is a message typed into a session's pane.
type Typed struct {
	MessageID string    `json:"message_id"`
	Session   string    `json:"session"`
	Text      string    `json:"text"` // the prompt as typed (with its attachments' paths)
	At        time.Time `json:"at"`   // just before the paste
}

// Held is a message in flight.
type Held struct {
	Since time.Time `json:"since"` // when it was claimed
}

// Offer is a Deliver anyway button for a message missed too long ago.
type Offer struct {
	AuthorID string    `json:"author_id"` // only they may use it
	Expires  time.Time `json:"expires"`
	Used     bool      `json:"used,omitempty"`
}

const cursorVersion = 1

// CursorKey is the record key of a channel (or thread) of a server.
func CursorKey(server, channelID string) string { return server + "@" + channelID }

// OpenCursors opens the catch-up cursors in a durable directory (see
// OpenRegistry).
func OpenCursors(d *Dir) (*Collection[Cursor], error) {
	return newCollection[Cursor](d, "cursors", cursorVersion)
}

// Handled records that a message was handled: Last moves up to it (never
// back), and its Held and Typed records are cleared.
func (c *Cursor) Handled(messageID string) {
	if SnowflakeLess(c.Last, messageID) {
		c.Last = messageID
	}
	delete(c.Held, messageID)
	if c.Typed != nil && c.Typed.MessageID == messageID {
		c.Typed = nil
	}
}

// PruneOffers drops offers expired before now.
func (c *Cursor) PruneOffers(now time.Time) {
	for id, o := range c.Offers {
		if now.After(o.Expires) {
			delete(c.Offers, id)
		}
	}
}

// SnowflakeLess orders Discord ids (decimal, no leading zeros) by value;
// "" is before every id.
func SnowflakeLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}
