package state

import "time"

// BotHealth is what the daemon learnt about a bot's standing with Discord,
// keyed by server name, for the panel and the logs: set when Discord
// refuses the bot (401 bad token, 403 no access) while queued replies wait,
// cleared when a post goes through again.
type BotHealth struct {
	// Refused is Discord's answer, such as "HTTP 401 Unauthorized"; empty
	// when the bot is fine.
	Refused   string    `json:"refused,omitempty"`
	Status    int       `json:"status,omitempty"`
	ChannelID string    `json:"channel_id,omitempty"`
	Since     time.Time `json:"since,omitzero"`
	Queued    int       `json:"queued,omitempty"` // replies kept in the outbox for it
}

const healthVersion = 1

// OpenHealth opens the collection of BotHealth records in d.
func OpenHealth(d *Dir) (*Collection[BotHealth], error) {
	return newCollection[BotHealth](d, "health", healthVersion)
}
