package state

import (
	"crypto/rand"
	"encoding/hex"
	"time"
)

// Schedule is a prompt to type into a session at a set time (/schedule). It
// lives in the durable registry: it survives restarts and reboots, and only
// the machine that maps its channel holds it.
type Schedule struct {
	Server    string `json:"server"`
	ChannelID string `json:"channel_id"`          // where /schedule ran: a project channel or a thread
	ParentID  string `json:"parent_id,omitempty"` // the thread's channel
	NewThread bool   `json:"new_thread,omitempty"`
	Prompt    string `json:"prompt"`
	When      string `json:"when"`           // as typed
	Cron      string `json:"cron,omitempty"` // "" for a one-shot
	// Next is when it runs next; a one-shot is removed once it ran.
	Next    time.Time `json:"next"`
	Owner   string    `json:"owner"` // the owner who scheduled it: the prompt is theirs
	Created time.Time `json:"created"`
	Runs    int       `json:"runs,omitempty"`
}

// NewScheduleID is a fresh schedule key (letters and digits, fit for a
// custom_id).
func NewScheduleID() string {
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
