package fakediscord

import (
	"encoding/json"
	"fmt"
	"time"
)

// Channel is a text channel or a thread.
type Channel struct {
	ID       string
	GuildID  string
	ParentID string // threads only
	Type     int    // 0 text, 11 public thread, 12 private thread
	Name     string
	Archived bool
	Locked   bool
	// AutoArchiveDuration is the thread's inactivity timeout in minutes.
	AutoArchiveDuration int
	// Members are a thread's members, its creator first; Invitable says
	// whether a private thread's members may add others (private_threads.go).
	Members   []string
	Invitable bool
}

func (c *Channel) isThread() bool { return c.Type == 10 || c.Type == 11 || c.Type == 12 }

func (c *Channel) json() map[string]any {
	m := map[string]any{"id": c.ID, "guild_id": c.GuildID, "type": c.Type, "name": c.Name}
	if c.isThread() {
		m["parent_id"] = c.ParentID
		d := c.AutoArchiveDuration
		if d == 0 {
			d = 1440
		}
		meta := map[string]any{"archived": c.Archived, "locked": c.Locked, "auto_archive_duration": d,
			"archive_timestamp": timestamp()}
		if c.Type == 12 {
			meta["invitable"] = c.Invitable
		}
		m["thread_metadata"] = meta
		m["member_count"], m["message_count"] = max(1, len(c.Members)), 0
	}
	return m
}

// File is an uploaded or attached file.
type File struct {
	Name        string
	ContentType string
	Data        []byte
	// DurationSecs and Waveform describe a voice message's audio (voice.go).
	DurationSecs float64
	Waveform     string
	id           string // attachment id, set when stored
}

// Message is a message as it stands now (edits replace its fields).
type Message struct {
	ID string
	// Type is Discord's message type: 0 default, 4 channel name change,
	// 6 pin, 7 member join, 18 thread created, 19 reply, 21 thread starter.
	Type      int
	ChannelID string
	GuildID   string
	Author    User
	Content   string
	// Components are the rows as the bot sent them.
	Components []map[string]any
	Embeds     []json.RawMessage
	Files      []File
	Flags      int
	// AllowedMentions is the allowed_mentions object the bot sent, if any.
	AllowedMentions json.RawMessage
	Reactions       []string // emoji the bot added
	Edits           int
	EditedAt        []time.Time // when each edit arrived (edits.go)
	History         []string    // the content before each edit
	Deleted         bool
	// Ephemeral messages (interaction responses with flag 64) are seen only
	// by the clicker and never echoed on the gateway.
	Ephemeral bool
	// Interaction is the token of the interaction this message answers.
	Interaction string
	// Nonce is the nonce the message was created with ("" = none).
	Nonce string
	// Reference is the message_reference Discord attaches (system
	// messages about threads), or nil.
	Reference map[string]any
	created   time.Time
	fileSeq   int    // files ever attached, for attachment ids
	previewed string // the link Discord previewed (previews.go)
}

// CustomIDs lists the custom_id of every component, in order.
func (m *Message) CustomIDs() []string {
	var ids []string
	walkComponents(m.Components, func(c map[string]any) {
		if id, ok := c["custom_id"].(string); ok {
			ids = append(ids, id)
		}
	})
	return ids
}

// Component returns the component with custom_id, or nil.
func (m *Message) Component(customID string) map[string]any {
	var found map[string]any
	walkComponents(m.Components, func(c map[string]any) {
		if c["custom_id"] == customID {
			found = c
		}
	})
	return found
}

func walkComponents(rows []map[string]any, fn func(map[string]any)) {
	for _, row := range rows {
		fn(row)
		inner, _ := row["components"].([]any)
		for _, c := range inner {
			if cm, ok := c.(map[string]any); ok {
				fn(cm)
			}
		}
	}
}

func (m *Message) clone() *Message {
	c := *m
	c.Files = append([]File(nil), m.Files...)
	c.Reactions = append([]string(nil), m.Reactions...)
	c.EditedAt = append([]time.Time(nil), m.EditedAt...)
	c.History = append([]string(nil), m.History...)
	return &c
}

// attachmentID is the id of the message's i-th file.
func (m *Message) attachmentID(i int) string {
	if id := m.Files[i].id; id != "" {
		return id
	}
	return fmt.Sprintf("%s%d", m.ID, i)
}

// json renders the message as Discord sends it.
func (s *Server) messageJSON(m *Message) map[string]any {
	var atts []map[string]any
	for i, f := range m.Files {
		aid := m.attachmentID(i)
		att := map[string]any{"id": aid, "filename": f.Name, "size": len(f.Data), "content_type": f.ContentType,
			"url": s.URL + "/attachments/" + m.ChannelID + "/" + aid + "/" + f.Name, "proxy_url": s.URL + "/attachments/" + m.ChannelID + "/" + aid + "/" + f.Name}
		if f.DurationSecs > 0 {
			att["duration_secs"], att["waveform"] = f.DurationSecs, f.Waveform
		}
		atts = append(atts, att)
	}
	comps := m.Components
	if comps == nil {
		comps = []map[string]any{}
	}
	embeds := shownEmbeds(m) // previews.go
	if atts == nil {
		atts = []map[string]any{}
	}
	out := map[string]any{"id": m.ID, "channel_id": m.ChannelID, "type": m.Type, "content": m.Content, "author": userJSON(m.Author),
		"attachments": atts, "embeds": embeds, "components": comps, "mentions": []any{}, "mention_roles": []any{},
		"mention_everyone": false, "tts": false, "pinned": false, "flags": m.Flags, "timestamp": timestamp(), "edited_timestamp": nil}
	if !m.created.IsZero() {
		out["timestamp"] = m.created.UTC().Format(time.RFC3339Nano)
	}
	if len(m.Reactions) > 0 {
		out["reactions"] = reactionsJSON(m.Reactions) // history.go
	}
	if m.Nonce != "" {
		out["nonce"] = m.Nonce
	}
	if m.Reference != nil {
		out["message_reference"] = m.Reference
	}
	if m.GuildID != "" {
		out["guild_id"] = m.GuildID
		if !m.Author.Bot {
			out["member"] = map[string]any{"roles": []any{}, "joined_at": timestamp(), "deaf": false, "mute": false, "flags": 0}
		}
	}
	return out
}

// Interaction is one interaction a test started.
type Interaction struct {
	ID        string
	Token     string
	Type      int // 2 command, 3 component, 4 autocomplete, 5 modal submit
	ChannelID string
	GuildID   string
	User      User
	MessageID string // the message whose component was used
	Data      map[string]any
	Created   int64 // unix nanos

	// ResponseType is the callback type the bot answered (0 = none yet).
	ResponseType int
	// Response is the raw callback body.
	Response json.RawMessage
	// Modal is the modal the bot opened (callback type 9).
	Modal map[string]any
	// OriginalID is the id of the message the response created or edited.
	OriginalID string
	// Followups are the ids of followup messages.
	Followups []string
	// Late is set when the callback came after the interaction expired.
	Late bool
}
