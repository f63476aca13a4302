package state

import "time"

// Binding is what a message carrying acting components showed when
// ccbridge drew it (posted or edited it): the message's place and the
// CardHash of its face. A click acts only from that message, still showing
// that face (internal/guard). Keyed by the message's id, kept in the
// durable directory: some of these messages are answered days later.
type Binding struct {
	Server    string    `json:"server"`
	ChannelID string    `json:"channel_id"`
	MessageID string    `json:"message_id"`
	Face      string    `json:"face"` // CardHash of the face and attachment ids
	Drawn     time.Time `json:"drawn"`
	// Spent: the message was redrawn without controls (answered).
	Spent bool `json:"spent,omitempty"`
}

const bindingVersion = 1

// OpenBindings opens the bindings in a durable directory (see
// OpenRegistry).
func OpenBindings(d *Dir) (*Collection[Binding], error) {
	return newCollection[Binding](d, "bindings", bindingVersion)
}
