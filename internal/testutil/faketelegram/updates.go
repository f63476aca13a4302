package faketelegram

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"time"
)

// optIn are the update kinds Telegram sends only when allowed_updates
// names them.
var optIn = map[string]bool{"chat_member": true, "message_reaction": true, "message_reaction_count": true}

// getUpdates serves long polling: offset confirms every update below it
// (a negative one keeps only the last -offset), unconfirmed updates are
// sent again, timeout waits for the first update, limit caps the batch,
// allowed_updates filters and is remembered. A second poll ends the first
// with 409, as Telegram does.
func (s *Server) getUpdates(r *http.Request, p params) (any, *apiErr) {
	limit := 100
	if p.has("limit") {
		limit = min(max(int(p.int("limit")), 1), 100)
	}
	timeout := time.Duration(max(p.int("timeout"), 0)) * time.Second
	var allowed []string
	setAllowed := p.object("allowed_updates", &allowed)

	s.mu.Lock()
	defer s.mu.Unlock()
	s.pollGen++
	gen := s.pollGen
	s.notify() // an earlier poll ends with 409
	if setAllowed {
		s.allowed = allowed
		if len(allowed) == 0 {
			s.allowed = nil
		}
	}
	if p.has("offset") {
		s.confirm(p.int("offset"))
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		if gen != s.pollGen {
			return nil, &apiErr{code: http.StatusConflict, desc: "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"}
		}
		out := s.deliverable(limit)
		if len(out) > 0 || timeout == 0 {
			return out, nil
		}
		s.parked++
		s.notify()
		ch := s.changed
		s.mu.Unlock()
		var timedOut, gone bool
		select {
		case <-ch:
		case <-timer.C:
			timedOut = true
		case <-r.Context().Done():
			gone = true
		case <-s.done:
			gone = true
		}
		s.mu.Lock()
		s.parked--
		switch {
		case gone:
			return []json.RawMessage{}, nil
		case timedOut:
			return s.deliverable(limit), nil
		}
	}
}

// Polling reports whether a getUpdates long poll is waiting.
func (s *Server) Polling() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.parked > 0
}

// confirm forgets confirmed updates; caller holds s.mu.
func (s *Server) confirm(offset int64) {
	if offset < 0 {
		if keep := int(-offset); keep < len(s.updates) {
			s.updates = s.updates[len(s.updates)-keep:]
		}
		return
	}
	i := 0
	for i < len(s.updates) && s.updates[i].id < offset {
		i++
	}
	s.updates = s.updates[i:]
}

// deliverable returns up to limit pending updates the bot asked for; the
// kinds it did not ask for are dropped. Caller holds s.mu.
func (s *Server) deliverable(limit int) []json.RawMessage {
	kept := s.updates[:0]
	out := []json.RawMessage{}
	for _, u := range s.updates {
		wanted := !optIn[u.kind]
		if s.allowed != nil {
			wanted = slices.Contains(s.allowed, u.kind)
		}
		if !wanted {
			continue
		}
		kept = append(kept, u)
		if len(out) < limit {
			out = append(out, u.body)
		}
	}
	s.updates = kept
	return out
}

// enqueue adds an update; caller holds s.mu.
func (s *Server) enqueue(kind string, payload any) int64 {
	id := s.nextUpd
	s.nextUpd++
	body, err := json.Marshal(map[string]any{"update_id": id, kind: payload})
	if err != nil {
		s.t.Fatalf("faketelegram: encode an update: %v", err)
	}
	s.updates = append(s.updates, update{id: id, kind: kind, body: body})
	s.notify()
	return id
}

// Dispatch queues an update of any other kind (my_chat_member,
// edited_message, ...) with payload as its object; it returns the update id.
func (s *Server) Dispatch(kind string, payload any) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.enqueue(kind, payload)
}

// Pending returns the ids of updates not yet confirmed.
func (s *Server) Pending() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]int64, 0, len(s.updates))
	for _, u := range s.updates {
		out = append(out, u.id)
	}
	return out
}

// Incoming is a message a person sends.
type Incoming struct {
	From     User  // zero: the owner
	ChatID   int64 // zero: the group
	ThreadID int64 // a topic, or zero for General
	Text     string
	ReplyTo  int64 // message id this one replies to
	// Voice is a voice note's bytes (OGG/Opus), with its length in seconds.
	Voice         []byte
	VoiceDuration int
	// Photo is an image's bytes (sent as one 1280×960 size).
	Photo []byte
	// Document is a file's bytes, named FileName; Caption goes with a photo
	// or a document.
	Document []byte
	FileName string
	Caption  string
}

// Inject stores a person's message in its chat and queues its update.
func (s *Server) Inject(in Incoming) Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	if in.From.ID == 0 {
		in.From = s.Owner
	}
	if in.ChatID == 0 {
		in.ChatID = s.ChatID
	}
	c := s.chats[in.ChatID]
	if c == nil {
		s.t.Fatalf("faketelegram: inject into unknown chat %d", in.ChatID)
	}
	if c.info.Type != "private" && c.members[in.From.ID] == "" {
		s.t.Fatalf("faketelegram: %s is not a member of chat %d and cannot post there", in.From.FirstName, in.ChatID)
	}
	if in.ThreadID != 0 && c.topics[in.ThreadID] == nil {
		s.t.Fatalf("faketelegram: inject into unknown topic %d", in.ThreadID)
	}
	from := in.From
	m := &Message{From: &from, Text: in.Text, Entities: commandEntities(in.Text), Caption: in.Caption}
	if in.Voice != nil {
		f := s.storeFile("voice", "voice.oga", in.Voice)
		m.Voice = &Voice{FileID: f.id, FileUniqueID: f.uniqueID, Duration: in.VoiceDuration, MimeType: "audio/ogg", FileSize: len(in.Voice)}
	}
	if in.Photo != nil {
		f := s.storeFile("photos", "photo.jpg", in.Photo)
		m.Photo = []PhotoSize{{FileID: f.id, FileUniqueID: f.uniqueID, Width: 1280, Height: 960, FileSize: len(in.Photo)}}
	}
	if in.Document != nil {
		f := s.storeFile("documents", in.FileName, in.Document)
		m.Document = &Document{FileID: f.id, FileUniqueID: f.uniqueID, FileName: in.FileName, MimeType: "application/octet-stream", FileSize: len(in.Document)}
	}
	// In a topic, a message that replies to nothing replies to the topic's
	// service message: Telegram's own quirk, which a bot must see through.
	target := in.ReplyTo
	if target == 0 && in.ThreadID != 0 {
		target = in.ThreadID
	}
	if target != 0 {
		r := c.byID[target]
		if r == nil {
			s.t.Fatalf("faketelegram: reply to unknown message %d", target)
		}
		rc := r.clone()
		rc.ReplyToMessage = nil
		m.ReplyToMessage = &rc
	}
	s.post(c, in.ThreadID, m)
	snap := m.clone()
	s.enqueue("message", snap)
	return snap
}

// botCommand is what Telegram marks as a bot_command in a person's text: a
// slash word at the start or after a space, with an optional @botname.
var botCommand = regexp.MustCompile(`(^|\s)(/[A-Za-z0-9_]{1,32}(@[A-Za-z0-9_]{3,32})?)`)

func commandEntities(text string) []Entity {
	var out []Entity
	for _, m := range botCommand.FindAllStringSubmatchIndex(text, -1) {
		start, end := m[4], m[5]
		out = append(out, Entity{Type: "bot_command", Offset: utf16Len(text[:start]), Length: utf16Len(text[start:end])})
	}
	return out
}

// OwnerText injects the owner's text message in a topic (0: General).
func (s *Server) OwnerText(threadID int64, text string) Message {
	return s.Inject(Incoming{ThreadID: threadID, Text: text})
}

// OwnerVoice injects the owner's voice note in a topic.
func (s *Server) OwnerVoice(threadID int64, ogg []byte, seconds int) Message {
	return s.Inject(Incoming{ThreadID: threadID, Voice: ogg, VoiceDuration: seconds})
}

// OwnerDocument injects the owner's file in a topic.
func (s *Server) OwnerDocument(threadID int64, name string, data []byte, caption string) Message {
	return s.Inject(Incoming{ThreadID: threadID, Document: data, FileName: name, Caption: caption})
}

// OwnerPhoto injects the owner's photo in a topic.
func (s *Server) OwnerPhoto(threadID int64, jpeg []byte, caption string) Message {
	return s.Inject(Incoming{ThreadID: threadID, Photo: jpeg, Caption: caption})
}

// ForceReplyAnswer injects from's reply to a bot message that asked for one
// with ForceReply; it is an error when the message did not.
func (s *Server) ForceReplyAnswer(from User, chatID, messageID int64, text string) (Message, error) {
	s.mu.Lock()
	c := s.chats[chatID]
	var m *Message
	if c != nil {
		m = c.byID[messageID]
	}
	switch {
	case m == nil || m.Deleted:
		s.mu.Unlock()
		return Message{}, fmt.Errorf("message %d not found in chat %d", messageID, chatID)
	case !m.ForceReply:
		s.mu.Unlock()
		return Message{}, fmt.Errorf("message %d did not ask for a reply (ForceReply)", messageID)
	}
	thread := m.MessageThreadID
	s.mu.Unlock()
	return s.Inject(Incoming{From: from, ChatID: chatID, ThreadID: thread, ReplyTo: messageID, Text: text}), nil
}

// ErrNoButton is returned by Click when the message shows no button with
// that callback_data.
var ErrNoButton = errors.New("no button with that callback_data")

// Click injects from's press of the button with data on a message; it
// returns the callback query's id.
func (s *Server) Click(from User, chatID, messageID int64, data string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chats[chatID]
	if c == nil {
		return "", fmt.Errorf("chat %d not found", chatID)
	}
	m := c.byID[messageID]
	if m == nil || m.Deleted {
		return "", fmt.Errorf("message %d not found in chat %d", messageID, chatID)
	}
	found := false
	if m.ReplyMarkup != nil {
		for _, row := range m.ReplyMarkup.InlineKeyboard {
			for _, b := range row {
				found = found || (b.CallbackData != "" && b.CallbackData == data)
			}
		}
	}
	if !found {
		return "", fmt.Errorf("message %d: %w %q", messageID, ErrNoButton, data)
	}
	id := strconv.FormatInt(4_000_000_000_000_000_000+s.ids.Add(1), 10)
	snap := m.clone()
	q := CallbackQuery{ID: id, From: from, Message: &snap, ChatInstance: strconv.FormatInt(-c.info.ID, 10), Data: data}
	s.queries[id] = &query{created: time.Now()}
	s.enqueue("callback_query", q)
	return id, nil
}
