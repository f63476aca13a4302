package chat

// User is the person (or bot) behind an event.
type User struct {
	ID   string
	Name string
	Bot  bool
}

// Attachment is a file attached to a message.
type Attachment struct {
	Name string
	URL  string
	Size int
}

// MessageEvent is a message posted in a channel or thread.
type MessageEvent struct {
	Server      string // the configured server (bot) it arrived on
	ChannelID   string // the thread's id for a message in a thread
	ParentID    string // the thread's parent channel; empty outside threads
	MessageID   string
	Author      User
	Content     string
	Attachments []Attachment
}

// CommandEvent is a slash command.
type CommandEvent struct {
	Server    string
	ChannelID string
	ParentID  string
	User      User
	Name      string
	Options   map[string]string
}

// ComponentEvent is a button click or a select choice.
type ComponentEvent struct {
	Server    string
	ChannelID string
	MessageID string
	User      User
	CustomID  string
	Values    []string
}

// ButtonStyle mirrors Discord's button colours.
type ButtonStyle int

// Button styles.
const (
	Primary ButtonStyle = iota + 1
	Secondary
	Success
	Danger
)

// Button is one button of a reply.
type Button struct {
	Label    string
	CustomID string
	Style    ButtonStyle
}

// Reply is a message a person sees, possibly with rows of buttons.
type Reply struct {
	Content   string
	Rows      [][]Button
	Ephemeral bool // only the person who acted sees it
}

// Responder answers one interaction. Discord gives 3 seconds for the first
// answer (Respond, Defer or DeferUpdate); Edit follows a Defer or a
// DeferUpdate within 15 minutes.
type Responder interface {
	Respond(reply Reply) error
	Defer(ephemeral bool) error
	DeferUpdate() error
	Edit(reply Reply) error
}

// CommandSpec declares a slash command.
type CommandSpec struct {
	Name        string
	Description string
	Options     []OptionSpec
}

// OptionSpec declares a string option of a slash command.
type OptionSpec struct {
	Name        string
	Description string
	Required    bool
	Choices     []string // empty = free text
}
