package state

import "time"

// Opened is a folder opened with /open: a thread bound to a session of its
// own in a folder no project maps. It lives in the durable registry (never
// in the user's config), keyed by the thread's id, until /close forgets it.
type Opened struct {
	Server    string `json:"server"`
	ChannelID string `json:"channel_id"` // the channel the thread is in
	ThreadID  string `json:"thread_id"`
	Path      string `json:"path"`                // the folder, symlinks resolved
	Isolation string `json:"isolation,omitempty"` // "worktree", or "" for none
	Owner     string `json:"owner"`               // who opened it
	// Agent runs the folder's session: that of the project whose channel
	// /open ran in ("" for the default, as in the panel channel).
	Agent   string    `json:"agent,omitempty"`
	Created time.Time `json:"created"`
	// Closed: /close forgot the folder. The record stays so that the
	// thread never turns into a thread of its channel's project.
	Closed bool `json:"closed,omitempty"`
}
