package voice

import (
	"errors"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/ccbridge/ccbridge/internal/chat"
)

// The review of a transcript: with review on, the words are shown as a
// reply to the voice note with Send, Edit… and Cancel; only the words the
// owner sends go into the session. What follows is what the review asks
// and what an answer means; the front end posts it and queues the words.

// Kind is the kind of the review controls' ids (chat.ID):
// voice|<action>|<voice note id>.
const Kind = "voice"

// Review actions.
const (
	Send   = "send"
	Edit   = "edit"
	Cancel = "cancel"
	Submit = "submit" // the Edit… form
	Field  = "words"
)

// Review is a transcript waiting for its owner's answer, where P is where
// its words go.
type Review[P any] struct {
	Place    P
	Note     chat.MessageEvent // the voice message: it takes the receipt
	Words    string
	Expires  time.Time
	reviewID string // the review message the controls are on
}

// Reviews holds the reviews not answered yet, by voice note id. A review
// is taken out by the first answer, so a second click does nothing.
type Reviews[P any] struct {
	mu sync.Mutex
	m  map[string]*Review[P]
}

// Put registers a review before it is posted: a quick click must find it.
func (v *Reviews[P]) Put(id string, rv *Review[P]) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.m == nil {
		v.m = map[string]*Review[P]{}
	}
	v.m[id] = rv
}

// Get returns a live review, taking it out when take is set; an expired
// one is dropped.
func (v *Reviews[P]) Get(id string, now time.Time, take bool) (*Review[P], bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	rv, ok := v.m[id]
	if ok && (take || now.After(rv.Expires)) {
		delete(v.m, id)
	}
	return rv, ok && !now.After(rv.Expires)
}

// Posted records the message the review was posted as.
func (v *Reviews[P]) Posted(rv *Review[P], messageID string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	rv.reviewID = messageID
}

// Own says the click came from the person who sent the voice note, on the
// review message itself.
func (v *Reviews[P]) Own(rv *Review[P], userID, messageID string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return rv.Note.Author.ID == userID && (rv.reviewID == "" || rv.reviewID == messageID)
}

// Stale answers a click on a review that is not the clicker's (live) or
// not waiting any more.
func Stale(live bool) string {
	if live {
		return "Only the person who sent this voice note can answer its transcript."
	}
	return "This transcript was already answered, or it expired; nothing was sent. Send the voice note again."
}

// transcriptFits leaves room in a message for the heading.
const transcriptFits = chat.Limit - 200

// Transcript shows the words under a heading; words too long for one
// message go whole in a file beside their start.
func Transcript(heading, words string) chat.Message {
	if utf8.RuneCountInString(words) <= transcriptFits {
		return chat.Message{Content: heading + "\n>>> " + words}
	}
	head := string([]rune(words)[:transcriptFits-100])
	return chat.Message{Content: heading + " (the whole transcript is attached)\n>>> " + head + " …",
		Files: []chat.File{{Name: "transcript.txt", Data: []byte(words)}}}
}

// Sent redraws a review with the words sent: their file, if they need
// one, replaces the transcript attached for review (an update that names
// no files keeps the old ones).
func Sent(heading, words string) chat.Message {
	m := Transcript(heading, words)
	m.DropFiles = true
	return m
}

// Controls are a review's Send, Edit… and Cancel; id names each action's.
func Controls(id func(action string) (string, error)) ([]chat.Row, error) {
	var row chat.Row
	for _, b := range []struct {
		label, action string
		style         chat.ButtonStyle
	}{{"Send", Send, chat.Success}, {"Edit…", Edit, chat.Secondary}, {"Cancel", Cancel, chat.Danger}} {
		id, err := id(b.action)
		if err != nil {
			return nil, err
		}
		row.Buttons = append(row.Buttons, chat.Button{Label: b.label, CustomID: id, Style: b.style})
	}
	return []chat.Row{row}, nil
}

// EditForm is the Edit… form, holding the words; id is its Submit's.
func EditForm(id, words string) chat.Modal {
	return chat.Modal{CustomID: id, Title: "Edit, then send to Claude", Inputs: []chat.TextInput{{
		CustomID: Field, Label: "What Claude gets", Paragraph: true, Value: words, Required: true, MaxLength: MaxWords}}}
}

// Failed says why a voice note's words were not sent, from the
// transcription's error; saved says where its audio is.
func Failed(err error, saved string) string {
	var failed *Error
	switch {
	case errors.Is(err, ErrEmpty):
		return "⚠️ The transcript of this voice note is empty; nothing was sent to Claude. " + saved
	case errors.As(err, &failed):
		msg := "⚠️ Could not transcribe this voice note: " + chat.ErrText(err) + ". Nothing was sent to Claude. " + saved
		if failed.Stderr != "" {
			msg += "\nIts last error output:\n```\n" + strings.ReplaceAll(failed.Stderr, "```", "ʼʼʼ") + "\n```"
		}
		return msg
	}
	return "⚠️ Could not transcribe this voice note: " + chat.ErrText(err) + ". " + saved
}
