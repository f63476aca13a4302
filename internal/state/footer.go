package state

import "time"

// FooterEdit is a reply whose footer was written from figures older than
// its turn's own (Claude runs the statusLine about when it runs Stop, and
// the reply does not wait for it), keyed by Claude session id: the
// statusLine command edits the turn's own figures in when they come.
type FooterEdit struct {
	Server    string    `json:"server"`
	ChannelID string    `json:"channel_id"`
	MessageID string    `json:"message_id"`
	PromptID  string    `json:"prompt_id"` // the turn whose figures are due
	Content   string    `json:"content"`   // the message as it stands
	Footer    string    `json:"footer"`    // its last line, the footer
	At        time.Time `json:"at"`
}

// UserStatusLine is the statusLine command of a Claude session's own
// settings, keyed by Claude session id: read once per session, as Claude
// Code reads it, so a settings file written later cannot choose what runs.
type UserStatusLine struct {
	Command string    `json:"command,omitempty"` // "" when there is none
	At      time.Time `json:"at"`
}

const (
	footerEditVersion     = 1
	userStatusLineVersion = 1
)

// OpenFooterEdits opens the footers due an edit.
func OpenFooterEdits(d *Dir) (*Collection[FooterEdit], error) {
	return newCollection[FooterEdit](d, "footer-edits", footerEditVersion)
}

// OpenUserStatusLines opens the per-session statusLine commands.
func OpenUserStatusLines(d *Dir) (*Collection[UserStatusLine], error) {
	return newCollection[UserStatusLine](d, "user-statuslines", userStatusLineVersion)
}
