package chat

import "strings"

// User is the person (or bot) behind an event.
type User struct {
	ID   string
	Name string
	Bot  bool
}

// Attachment is a file attached to a message.
type Attachment struct {
	Name        string
	URL         string
	Size        int
	ContentType string
	// DurationSecs is a voice message's length (0 for other files).
	DurationSecs float64
}

// MessageEvent is a message posted in a channel or thread.
type MessageEvent struct {
	Server      string // the configured server (bot) it arrived on
	ChannelID   string // the thread's id for a message in a thread
	ParentID    string // the thread's parent channel; empty outside threads
	ThreadName  string // the thread's name, when known; empty outside threads
	MessageID   string
	Type        int // Discord's message type: 0 default, 19 reply; others are system messages
	Author      User
	Content     string
	Attachments []Attachment
	Flags       int // Discord's message flags (FlagVoiceMessage, …)
}

// FlagVoiceMessage marks a voice message (Discord's IS_VOICE_MESSAGE).
const FlagVoiceMessage = 1 << 13

// Voice returns the audio of a voice message: flag IS_VOICE_MESSAGE and one
// audio/ogg attachment, as Discord's clients send them. Any other audio file
// is an ordinary attachment.
func (ev MessageEvent) Voice() (Attachment, bool) {
	if ev.Flags&FlagVoiceMessage == 0 || len(ev.Attachments) != 1 {
		return Attachment{}, false
	}
	a := ev.Attachments[0]
	mt, _, _ := strings.Cut(a.ContentType, ";")
	return a, strings.TrimSpace(mt) == "audio/ogg"
}

// Discord message types that carry something a person wrote. Everything
// else (thread created 18, rename 4, pin 6, thread starter 21, …) is a
// system message that Discord emits with the acting user as its author.
const (
	MessageDefault = 0
	MessageReply   = 19
)

// Prompt reports whether the message is one a person wrote: a default
// message or a reply.
func (ev MessageEvent) Prompt() bool { return ev.Type == MessageDefault || ev.Type == MessageReply }

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
	Content   string   // the text of the message the component is on
	Rows      []Row    // its components, as Discord gave them
	FileIDs   []string // the ids of its attachments
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

// Button is one button: a control (a CustomID ccbridge answers, a Style)
// or, with a URL, a link the person's client opens. A link button acts on
// nothing ccbridge holds, so it has no CustomID, no Style and no guard.
type Button struct {
	Label    string
	CustomID string
	Style    ButtonStyle
	Disabled bool
	URL      string // http(s), at most MaxURL characters
}

// Link reports whether b is a link button.
func (b Button) Link() bool { return b.URL != "" }

// Option is one choice of a select menu.
type Option struct {
	Label       string
	Value       string
	Description string
	Default     bool
}

// Select is a string select menu; it fills a row alone.
type Select struct {
	CustomID    string
	Placeholder string
	Options     []Option
	MinValues   int
	MaxValues   int
}

// Row is one row of components: buttons (at most five), or one select.
type Row struct {
	Buttons []Button
	Select  *Select
}

// File is an attachment of an outgoing message.
type File struct {
	Name string
	Data []byte
}

// Message is a message a person sees, possibly with rows of components.
type Message struct {
	Content string
	Rows    []Row
	Files   []File
	// DropFiles: an edit (Update, Edit) removes the message's attachments,
	// Files replacing them; without it, an edit with no Files keeps them.
	DropFiles bool
	Ephemeral bool   // only the person who acted sees it (interaction answers)
	ReplyTo   string // the id of a message in the same channel this one answers
}

// Reply is what an interaction is answered with.
type Reply = Message

// TextInput is one field of a modal.
type TextInput struct {
	CustomID  string
	Label     string
	Paragraph bool
	Value     string // prefilled
	Required  bool
	MaxLength int
}

// Modal is a form Discord shows over the client.
type Modal struct {
	CustomID string
	Title    string
	Inputs   []TextInput
}

// ModalEvent is a submitted modal.
type ModalEvent struct {
	Server    string
	ChannelID string
	MessageID string // the message whose component opened the modal
	Content   string // its text, components and attachments' ids,
	Rows      []Row  // as for a ComponentEvent
	FileIDs   []string
	User      User
	CustomID  string
	Values    map[string]string // by input custom_id
}

// Responder answers one interaction. Discord gives 3 seconds for the first
// answer (Respond, Defer, DeferUpdate, Update or OpenModal); Edit follows a
// Defer or a DeferUpdate within 15 minutes. Edit and Update return the id
// of the message they drew, so that a message carrying acting components
// can be bound to what it shows (internal/guard).
type Responder interface {
	// Respond answers with a new message; it carries no acting components.
	Respond(reply Reply) error
	Defer(ephemeral bool) error
	DeferUpdate() error
	// Edit draws the deferred answer: the response's own message after a
	// Defer, the clicked message after a DeferUpdate.
	Edit(reply Reply) (string, error)
	// Update replaces the message the component is on (interaction type 7).
	Update(msg Message) (string, error)
	// OpenModal shows a form; its submit arrives as a ModalEvent.
	OpenModal(m Modal) error
}

// CommandSpec declares a slash command.
type CommandSpec struct {
	Name        string
	Description string
	Options     []OptionSpec
}

// OptionSpec declares an option of a slash command: a string, or with
// Integer a whole number from MinValue to MaxValue.
type OptionSpec struct {
	Name        string
	Description string
	Required    bool
	Choices     []Choice // empty = free text
	MaxLength   int      // in characters; 0 = Discord's default (6000)
	Integer     bool
	MinValue    int
	MaxValue    int
	// Autocomplete: suggestions come from HandleAutocomplete as the person
	// types (the value typed is taken too); never with Choices.
	Autocomplete bool
}

// Choice is one value an option offers, with the label shown for it.
type Choice struct {
	Name  string
	Value string
}

// MaxChoices is Discord's limit on an option's choices and on the
// suggestions of one autocomplete answer.
const MaxChoices = 25

// AutocompleteEvent is a person typing into an option that suggests
// values: the command, the option being typed into (Option) and what was
// typed so far (Value), with the other options given yet.
type AutocompleteEvent struct {
	Server    string
	ChannelID string
	ParentID  string // set when the channel is a thread
	User      User
	Command   string
	Option    string
	Value     string
	Options   map[string]string
}
