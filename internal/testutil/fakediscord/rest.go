package fakediscord

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"
)

var apiPrefix = regexp.MustCompile(`^/api/v(9|10)`)

// filePart is the multipart name Discord takes as a file.
var filePart = regexp.MustCompile(`^files\[\d+\]$`)

// MaxFileSize is Discord's default per-file upload limit (10 MiB).
const MaxFileSize = 10 << 20

// serveREST routes /api/v9 and /api/v10 calls.
func (s *Server) serveREST(w http.ResponseWriter, r *http.Request) {
	loc := apiPrefix.FindStringIndex(r.URL.Path)
	if loc == nil {
		apiError(w, 404, 0, "404: Not Found")
		return
	}
	p := r.URL.Path[loc[1]:]
	s.throttleUpload(r)
	seg := strings.Split(strings.Trim(p, "/"), "/")
	rec := &statusRecorder{ResponseWriter: w, status: 200}
	var bot *Bot
	s.mu.Lock()
	tokenRoute := seg[0] == "interactions" || seg[0] == "webhooks" || p == "/gateway"
	if auth := r.Header.Get("Authorization"); !tokenRoute && strings.HasPrefix(auth, "Bot ") {
		bot = s.botByToken(auth) // REST wants "Bot <token>"; a bare token is 401
	}
	f := s.takeFault(r.Method, p)
	if f != nil && f.status == 429 {
		s.stats.RateLimited++
	} else if f != nil {
		s.stats.Failed++
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		name := ""
		if bot != nil {
			name = bot.Name
		}
		s.calls = append(s.calls, Call{Method: r.Method, Path: p, Status: rec.status, Bot: name})
		s.notify()
		s.mu.Unlock()
	}()
	if !tokenRoute && bot == nil {
		apiError(rec, 401, 0, "401: Unauthorized")
		return
	}
	if bad := s.schemaRefusal(r, seg); bad != nil {
		writeFormError(rec, bad)
		return
	}
	if f != nil && f.after {
		s.route(discardWriter{h: http.Header{}}, r, bot, seg)
		apiError(rec, f.status, 0, fmt.Sprintf("%d: injected failure after processing", f.status))
		return
	}
	if f != nil {
		if f.status == 429 {
			rec.Header().Set("Retry-After", fmt.Sprint(int(f.retryAfter+0.999)))
			rec.Header().Set("X-RateLimit-Limit", "5")
			rec.Header().Set("X-RateLimit-Remaining", "0")
			rec.Header().Set("X-RateLimit-Reset-After", fmt.Sprint(f.retryAfter))
			rec.Header().Set("X-RateLimit-Bucket", "fake")
			rec.Header().Set("X-RateLimit-Scope", "user")
			writeJSON(rec, 429, map[string]any{"message": "You are being rate limited.", "retry_after": f.retryAfter, "global": false})
			return
		}
		apiError(rec, f.status, 0, fmt.Sprintf("%d: injected failure", f.status))
		return
	}
	s.route(rec, r, bot, seg)
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (s *Server) route(w http.ResponseWriter, r *http.Request, bot *Bot, seg []string) {
	m, n := r.Method, len(seg)
	is := func(method string, parts ...string) bool {
		if m != method || n != len(parts) {
			return false
		}
		for i, p := range parts {
			if p != "*" && p != seg[i] {
				return false
			}
		}
		return true
	}
	switch {
	case is("GET", "gateway"):
		writeJSON(w, 200, map[string]any{"url": s.wsURL()})
	case is("GET", "gateway", "bot"):
		writeJSON(w, 200, map[string]any{"url": s.wsURL(), "shards": 1,
			"session_start_limit": s.sessionStartLimit(bot)})
	case is("GET", "users", "@me"):
		writeJSON(w, 200, userJSON(bot.user()))
	case is("GET", "channels", "*"):
		s.getChannel(w, bot, seg[1])
	case is("PATCH", "channels", "*"):
		s.editChannel(w, r, bot, seg[1])
	case is("POST", "channels", "*", "messages"):
		s.createMessage(w, r, bot, seg[1])
	case is("GET", "channels", "*", "messages", "*"):
		s.getMessage(w, bot, seg[1], seg[3])
	case is("PATCH", "channels", "*", "messages", "*"):
		s.editMessage(w, r, bot, seg[1], seg[3])
	case is("DELETE", "channels", "*", "messages", "*"):
		s.deleteMessage(w, bot, seg[1], seg[3])
	case is("POST", "channels", "*", "typing"):
		s.typing(w, bot, seg[1])
	case is("PUT", "channels", "*", "messages", "*", "reactions", "*", "@me"):
		s.react(w, bot, seg[1], seg[3], seg[5])
	case is("POST", "channels", "*", "threads"):
		s.startThread(w, r, bot, seg[1], "")
	case is("POST", "channels", "*", "messages", "*", "threads"):
		s.startThread(w, r, bot, seg[1], seg[3])
	case is("PUT", "applications", "*", "guilds", "*", "commands"):
		s.putCommands(w, r, seg[3])
	case is("PUT", "applications", "*", "commands"):
		s.putCommands(w, r, "global")
	case is("POST", "interactions", "*", "*", "callback"):
		s.callback(w, r, seg[2])
	case is("GET", "webhooks", "*", "*", "messages", "@original"):
		s.original(w, r, seg[2])
	case is("PATCH", "webhooks", "*", "*", "messages", "@original"):
		s.original(w, r, seg[2])
	case is("DELETE", "webhooks", "*", "*", "messages", "@original"):
		s.original(w, r, seg[2])
	case is("POST", "webhooks", "*", "*"):
		s.followup(w, r, seg[2])
	case is("PATCH", "webhooks", "*", "*", "messages", "*"), is("DELETE", "webhooks", "*", "*", "messages", "*"):
		s.editFollowup(w, r, seg[2], seg[4])
	case s.routeThreads(w, r, bot, seg): // private_threads.go
	case s.routeApp(w, r, bot, seg): // app.go
	case s.routeFleet(w, r, bot, seg): // fleet_rules.go
	default:
		apiError(w, 404, 0, fmt.Sprintf("404: fakediscord has no route %s /%s", m, strings.Join(seg, "/")))
	}
}

func (s *Server) wsURL() string { return "ws" + strings.TrimPrefix(s.URL, "http") + "/gateway" }

// outgoing is the body of a message create or edit, JSON or multipart.
type outgoing struct {
	Content         *string           `json:"content"`
	Components      []map[string]any  `json:"components"`
	Embeds          []json.RawMessage `json:"embeds"`
	Flags           int               `json:"flags"`
	AllowedMentions json.RawMessage   `json:"allowed_mentions"`
	Nonce           json.RawMessage   `json:"nonce"`
	EnforceNonce    bool              `json:"enforce_nonce"`
	// MessageReference makes the message a reply (voice.go).
	MessageReference *messageReference `json:"message_reference"`
	hasComponents    bool
	hasAttachments   bool
	hasFlags         bool // previews.go
	attachments      []struct {
		ID json.RawMessage `json:"id"`
	}
	files []File
	// tooLarge answers a body Discord refuses for its files (413/40005,
	// 30015), or is nil.
	tooLarge func(http.ResponseWriter)
}

// readPayload returns a request's JSON (the payload_json part of a
// multipart body) and its files.
func readPayload(r *http.Request) ([]byte, []File, error) {
	mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if !strings.HasPrefix(mt, "multipart/") {
		body, err := io.ReadAll(r.Body)
		return body, nil, err
	}
	var body []byte
	var files []File
	mr := multipart.NewReader(r.Body, params["boundary"])
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return body, files, nil
		}
		if err != nil {
			return nil, nil, err
		}
		data, err := io.ReadAll(part)
		if err != nil {
			return nil, nil, err
		}
		switch name := part.FormName(); {
		case name == "payload_json":
			body = data
		case filePart.MatchString(name):
			files = append(files, File{Name: part.FileName(), ContentType: part.Header.Get("Content-Type"), Data: data})
		}
		// Discord ignores other parts: only files[n] are attachments.
	}
}

func readOutgoing(r *http.Request) (*outgoing, error) {
	body, files, err := readPayload(r)
	if err != nil {
		return nil, err
	}
	return parseOutgoing(body, files)
}

func parseOutgoing(body []byte, files []File) (*outgoing, error) {
	o := &outgoing{files: files}
	for _, f := range files {
		if len(f.Data) > MaxFileSize {
			o.tooLarge = func(w http.ResponseWriter) { apiError(w, 413, 40005, "Request entity too large") }
		}
	}
	if len(files) > 10 {
		o.tooLarge = func(w http.ResponseWriter) {
			apiError(w, 400, 30015, "Maximum number of attachments in a message reached (10)")
		}
	}
	if len(body) == 0 {
		return o, nil
	}
	if err := json.Unmarshal(body, o); err != nil {
		return nil, err
	}
	var raw map[string]json.RawMessage
	_ = json.Unmarshal(body, &raw)
	c, ok := raw["components"]
	o.hasComponents = ok && string(c) != "null"
	f, ok := raw["flags"]
	o.hasFlags = ok && string(f) != "null"
	if a, ok := raw["attachments"]; ok && string(a) != "null" {
		o.hasAttachments = true
		_ = json.Unmarshal(a, &o.attachments)
	}
	return o, nil
}

// readMessageBody reads and validates a message body, answering a bad one
// with Discord's error itself.
func readMessageBody(w http.ResponseWriter, r *http.Request) (*outgoing, bool) {
	o, err := readOutgoing(r)
	if err != nil {
		apiError(w, 400, 50109, "The request body contains invalid JSON.")
		return nil, false
	}
	if o.tooLarge != nil {
		o.tooLarge(w)
		return nil, false
	}
	if e := o.validateMessage(); e != nil {
		writeFormError(w, e)
		return nil, false
	}
	return o, true
}

// channelMessage finds a message that stands in a channel, answering 10008
// otherwise; caller holds s.mu.
func (s *Server) channelMessage(w http.ResponseWriter, bot *Bot, chID, msgID string) (*Message, bool) {
	if _, ok := s.guildChannel(w, bot, chID); !ok {
		return nil, false
	}
	m, ok := s.messages[msgID]
	if !ok || m.ChannelID != chID || m.Deleted {
		apiError(w, 404, 10008, "Unknown Message")
		return nil, false
	}
	return m, true
}

// guildChannel finds a channel the bot can see: 404 10003 when there is
// none, 403 50001 Missing Access when it is in another guild; caller holds
// s.mu.
func (s *Server) guildChannel(w http.ResponseWriter, bot *Bot, id string) (*Channel, bool) {
	c, ok := s.channels[id]
	if !ok {
		apiError(w, 404, 10003, "Unknown Channel")
		return nil, false
	}
	if c.GuildID != bot.GuildID {
		apiError(w, 403, 50001, "Missing Access")
		return nil, false
	}
	return c, true
}

// maySend answers as Discord does when the bot lacks what a message
// create needs in the channel (a thread takes its parent's overwrites):
// View Channel (403 50001), Send Messages or, in a thread, Send Messages
// in Threads, and Attach Files for files (403 50013); caller holds s.mu.
func (s *Server) maySend(w http.ResponseWriter, bot *Bot, c *Channel, files bool) bool {
	at := c.ID
	send := PermSendMessages
	if c.isThread() {
		at, send = c.ParentID, PermSendInThreads
	}
	perms := s.botPermissions(bot, at)
	switch {
	case perms&PermViewChannel == 0:
		apiError(w, 403, 50001, "Missing Access")
	case perms&send == 0, files && perms&PermAttachFiles == 0:
		apiError(w, 403, 50013, "Missing Permissions")
	default:
		return true
	}
	return false
}

// archivedThread answers 50083 when a message's channel is an archived
// thread: Discord refuses edits and reactions there; caller holds s.mu.
func (s *Server) archivedThread(w http.ResponseWriter, chID string) bool {
	if c := s.channels[chID]; c != nil && c.isThread() && c.Archived {
		apiError(w, 400, 50083, "Thread is archived")
		return true
	}
	return false
}

func (s *Server) getChannel(w http.ResponseWriter, bot *Bot, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.guildChannel(w, bot, id)
	if !ok {
		return
	}
	m := c.json()
	if !c.isThread() {
		m["permission_overwrites"] = overwritesJSON(s.app(bot).overwrites[id])
	}
	writeJSON(w, 200, m)
}

func (s *Server) editChannel(w http.ResponseWriter, r *http.Request, bot *Bot, id string) {
	var body struct {
		Archived            *bool   `json:"archived"`
		Locked              *bool   `json:"locked"`
		Name                *string `json:"name"`
		AutoArchiveDuration int     `json:"auto_archive_duration"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		apiError(w, 400, 50109, "The request body contains invalid JSON.")
		return
	}
	var e *formError
	if body.Name != nil {
		e = validateThreadName(*body.Name)
	}
	if e == nil {
		e = validateArchiveDuration(body.AutoArchiveDuration)
	}
	if e != nil {
		writeFormError(w, e)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.guildChannel(w, bot, id)
	if !ok {
		return
	}
	// "Requires the thread to have archived set to false or be set to
	// false in the request": archiving an archived thread is refused too.
	if c.isThread() && c.Archived && (body.Archived == nil || *body.Archived) {
		apiError(w, 400, 50083, "Thread is archived")
		return
	}
	if body.Archived != nil {
		c.Archived = *body.Archived
	}
	if body.Locked != nil {
		c.Locked = *body.Locked
	}
	renamed := body.Name != nil && *body.Name != c.Name
	if body.Name != nil {
		c.Name = *body.Name
	}
	if body.AutoArchiveDuration != 0 {
		c.AutoArchiveDuration = body.AutoArchiveDuration
	}
	s.dispatchGuild(c.GuildID, "THREAD_UPDATE", c.json())
	if renamed && c.isThread() { // Discord announces a rename in the thread
		s.addMessage(&Message{ID: s.id(), Type: 4, ChannelID: c.ID, GuildID: c.GuildID, Author: bot.user(), Content: c.Name})
	}
	writeJSON(w, 200, c.json())
}

func (s *Server) createMessage(w http.ResponseWriter, r *http.Request, bot *Bot, chID string) {
	o, ok := readMessageBody(w, r)
	if !ok {
		return
	}
	if o.empty() {
		apiError(w, 400, 50006, "Cannot send an empty message")
		return
	}
	if e := validateAllowedMentions(o.AllowedMentions); e != nil { // mentions.go
		writeFormError(w, e)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.guildChannel(w, bot, chID)
	if !ok {
		return
	}
	if !s.maySend(w, bot, c, len(o.files) > 0) {
		return
	}
	if c.Archived {
		if c.Locked {
			apiError(w, 400, 50083, "Thread is archived")
			return
		}
		c.Archived = false // posting unarchives, as on Discord
		s.dispatchGuild(c.GuildID, "THREAD_UPDATE", c.json())
	}
	nonce := o.nonce()
	if prev := s.sameNonce(bot.UserID, nonce); o.EnforceNonce && prev != nil {
		writeJSON(w, 200, s.messageJSON(prev)) // Discord returns the first message, creates nothing
		return
	}
	typ, ref, bad := s.replyTo(chID, o.MessageReference) // voice.go
	if bad != nil {
		writeFormError(w, bad)
		return
	}
	m := &Message{ID: s.id(), Type: typ, ChannelID: chID, GuildID: c.GuildID, Author: bot.user(), Components: o.Components,
		Embeds: o.Embeds, Files: o.files, Flags: o.Flags, AllowedMentions: o.AllowedMentions, Nonce: nonce, Reference: ref}
	if o.Content != nil {
		m.Content = *o.Content
	}
	s.addMessage(m)
	writeJSON(w, 200, s.messageJSON(m))
}

// addMessage stores a message and dispatches MESSAGE_CREATE; caller holds s.mu.
func (s *Server) addMessage(m *Message) {
	if m.created.IsZero() {
		m.created = time.Now()
	}
	s.messages[m.ID] = m
	s.order[m.ChannelID] = append(s.order[m.ChannelID], m.ID)
	s.storeFiles(m)
	s.unfurl(m) // previews.go
	if !m.Ephemeral {
		s.dispatchGuild(m.GuildID, "MESSAGE_CREATE", s.messageJSON(m))
	}
	s.notify()
}

// storeFiles gives a message's files their attachment ids and makes them
// downloadable; caller holds s.mu.
func (s *Server) storeFiles(m *Message) {
	for i := range m.Files {
		if m.Files[i].id == "" { // <message id><n>, n counting every file it ever had
			m.Files[i].id = fmt.Sprintf("%s%d", m.ID, m.fileSeq)
			m.fileSeq++
		}
		f := m.Files[i]
		s.attachments[fmt.Sprintf("/attachments/%s/%s/%s", m.ChannelID, f.id, f.Name)] = f.Data
	}
}

// getMessage is GET /channels/{id}/messages/{id}: it needs View Channel
// (403 50001) and Read Message History (403 50013) where the message
// stands (a thread takes its parent's overwrites).
func (s *Server) getMessage(w http.ResponseWriter, bot *Bot, chID, msgID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.channelMessage(w, bot, chID, msgID)
	if !ok {
		return
	}
	at := chID
	if c := s.channels[chID]; c.isThread() {
		at = c.ParentID
	}
	switch perms := s.botPermissions(bot, at); {
	case perms&PermViewChannel == 0:
		apiError(w, 403, 50001, "Missing Access")
		return
	case perms&PermReadHistory == 0:
		apiError(w, 403, 50013, "Missing Permissions")
		return
	}
	writeJSON(w, 200, s.messageJSON(m))
}

func (s *Server) editMessage(w http.ResponseWriter, r *http.Request, bot *Bot, chID, msgID string) {
	o, ok := readMessageBody(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.channelMessage(w, bot, chID, msgID)
	if !ok {
		return
	}
	if m.Author.ID != bot.UserID {
		apiError(w, 403, 50005, "Cannot edit a message authored by another user")
		return
	}
	if s.archivedThread(w, chID) {
		return
	}
	if s.editEmpties(m, o) {
		apiError(w, 400, 50006, "Cannot send an empty message")
		return
	}
	s.applyEdit(m, o)
	writeJSON(w, 200, s.messageJSON(m))
}

// applyEdit changes a message; caller holds s.mu.
func (s *Server) applyEdit(m *Message, o *outgoing) {
	m.History = append(m.History, m.Content)
	if o.Content != nil {
		m.Content = *o.Content
	}
	if o.hasComponents {
		m.Components = o.Components
	}
	if o.Embeds != nil {
		m.Embeds = o.Embeds
	}
	applyFlags(m, o) // previews.go
	if o.hasAttachments || len(o.files) > 0 {
		m.Files = append(keptFiles(m, o), o.files...)
		s.storeFiles(m)
	}
	m.Edits++
	m.EditedAt = append(m.EditedAt, time.Now())
	s.unfurl(m)
	if !m.Ephemeral {
		s.dispatchGuild(m.GuildID, "MESSAGE_UPDATE", s.messageJSON(m))
	}
	s.notify()
}

func (s *Server) deleteMessage(w http.ResponseWriter, bot *Bot, chID, msgID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.channelMessage(w, bot, chID, msgID)
	if !ok {
		return
	}
	m.Deleted = true
	s.dispatchGuild(m.GuildID, "MESSAGE_DELETE", map[string]any{"id": m.ID, "channel_id": m.ChannelID, "guild_id": m.GuildID})
	s.notify()
	w.WriteHeader(204)
}

func (s *Server) typing(w http.ResponseWriter, bot *Bot, chID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.guildChannel(w, bot, chID); !ok {
		return
	}
	w.WriteHeader(204)
}

func (s *Server) react(w http.ResponseWriter, bot *Bot, chID, msgID, emoji string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.channelMessage(w, bot, chID, msgID)
	if !ok || s.archivedThread(w, chID) {
		return
	}
	if !knownEmoji(emoji) {
		apiError(w, 400, 10014, "Unknown Emoji")
		return
	}
	if !slices.Contains(m.Reactions, emoji) {
		m.Reactions = append(m.Reactions, emoji)
	}
	s.notify()
	w.WriteHeader(204)
}

func (s *Server) startThread(w http.ResponseWriter, r *http.Request, bot *Bot, chID, fromMsg string) {
	var body struct {
		Name                string `json:"name"`
		Type                int    `json:"type"`
		AutoArchiveDuration int    `json:"auto_archive_duration"`
		Invitable           *bool  `json:"invitable"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		apiError(w, 400, 50109, "The request body contains invalid JSON.")
		return
	}
	e := validateThreadName(body.Name)
	if e == nil {
		e = validateArchiveDuration(body.AutoArchiveDuration)
	}
	if e == nil && fromMsg == "" && body.Type != 0 && body.Type != 11 && body.Type != 12 {
		e = invalid("type", "BASE_TYPE_CHOICES", "Value must be one of {10, 11, 12}.")
	}
	if e != nil {
		writeFormError(w, e)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	parent, ok := s.guildChannel(w, bot, chID)
	if !ok {
		return
	}
	if parent.isThread() {
		apiError(w, 400, 50024, "Cannot execute action on this channel type")
		return
	}
	if fromMsg != "" {
		if m, ok := s.messages[fromMsg]; !ok || m.Deleted || m.ChannelID != chID {
			apiError(w, 404, 10008, "Unknown Message")
			return
		}
	}
	th := &Channel{ID: s.id(), GuildID: parent.GuildID, ParentID: chID, Type: 12, Name: body.Name, AutoArchiveDuration: body.AutoArchiveDuration}
	if fromMsg != "" {
		if _, exists := s.channels[fromMsg]; exists {
			apiError(w, 400, 160004, "A thread has already been created for this message")
			return
		}
		th.ID, th.Type = fromMsg, 11 // a thread started from a message has the message's id
	} else if body.Type != 0 {
		th.Type = body.Type
	}
	if !s.mayStartThread(w, bot, parent, th.Type) { // private_threads.go
		return
	}
	th.Members, th.Invitable = []string{bot.UserID}, th.Type == 12 && (body.Invitable == nil || *body.Invitable)
	s.createThread(th, bot.user(), fromMsg != "")
	writeJSON(w, 201, th.json())
}

func (s *Server) putCommands(w http.ResponseWriter, r *http.Request, scope string) {
	var cmds []map[string]any
	if err := json.NewDecoder(r.Body).Decode(&cmds); err != nil {
		apiError(w, 400, 50109, "The request body contains invalid JSON.")
		return
	}
	if e := validateCommands(cmds); e != nil {
		writeFormError(w, e)
		return
	}
	var out []json.RawMessage
	for _, c := range cmds {
		c["id"], c["application_id"], c["version"] = s.id(), "app", "1"
		b, _ := json.Marshal(c)
		out = append(out, b)
	}
	s.mu.Lock()
	s.commands[scope] = out
	s.notify()
	s.mu.Unlock()
	if out == nil {
		out = []json.RawMessage{}
	}
	writeJSON(w, 200, out)
}

// Commands returns the commands registered for a guild (or "global").
func (s *Server) Commands(scope string) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, raw := range s.commands[scope] {
		var c map[string]any
		_ = json.Unmarshal(raw, &c)
		out = append(out, c)
	}
	return out
}

func (s *Server) callback(w http.ResponseWriter, r *http.Request, token string) {
	body, files, err := readPayload(r)
	var cb struct {
		Type int             `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	if err == nil {
		err = json.Unmarshal(body, &cb)
	}
	if err != nil {
		apiError(w, 400, 50109, "The request body contains invalid JSON.")
		return
	}
	data, err := parseOutgoing(cb.Data, files)
	if err != nil {
		apiError(w, 400, 50109, "The request body contains invalid JSON.")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.interactions[token]
	if !ok {
		apiError(w, 404, 10062, "Unknown interaction")
		return
	}
	if it.ResponseType != 0 {
		apiError(w, 400, 40060, "Interaction has already been acknowledged.")
		return
	}
	if time.Since(time.Unix(0, it.Created)) > s.InteractionTTL {
		it.Late = true
		s.notify()
		apiError(w, 404, 10062, "Unknown interaction")
		return
	}
	if e := callbackAllowed(it, cb.Type); e != nil {
		writeFormError(w, e)
		return
	}
	if e := autocompleteAllowed(it, cb.Type, cb.Data); e != nil { // autocomplete.go
		writeFormError(w, e)
		return
	}
	switch cb.Type {
	case 4, 5, 7:
		if data.tooLarge != nil {
			data.tooLarge(w)
			return
		}
		if e := data.validateMessage(); e != nil {
			writeFormError(w, e)
			return
		}
	}
	switch cb.Type {
	case 4, 5: // message, deferred message
		if cb.Type == 4 && data.empty() {
			apiError(w, 400, 50006, "Cannot send an empty message")
			return
		}
		m := &Message{ID: s.id(), ChannelID: it.ChannelID, GuildID: it.GuildID, Author: s.botByGuild(it.GuildID).user(),
			Components: data.Components, Embeds: data.Embeds, Files: data.files, Flags: data.Flags, Interaction: token, Ephemeral: data.Flags&64 != 0}
		if data.Content != nil {
			m.Content = *data.Content
		}
		if cb.Type == 5 {
			m.Flags |= 128 // LOADING until @original is edited
		}
		it.OriginalID = m.ID
		s.addMessage(m)
	case 7: // update the message the component is on
		m := s.messages[it.MessageID]
		if m == nil {
			writeFormError(w, invalid("type", "INTERACTION_RESPONSE_TYPE_INVALID", "There is no message to update"))
			return
		}
		// InteractionResponseData.Content has no omitempty: an update
		// without content clears the text, as on Discord.
		if data.Content == nil {
			empty := ""
			data.Content = &empty
		}
		if s.editEmpties(m, data) {
			apiError(w, 400, 50006, "Cannot send an empty message")
			return
		}
		s.applyEdit(m, data)
		it.OriginalID = m.ID
	case 6: // deferred update: @original is the message the component is on
		it.OriginalID = it.MessageID
	case 8: // autocomplete suggestions (checked above)
	case 9: // modal
		var modal map[string]any
		_ = json.Unmarshal(cb.Data, &modal)
		if e := validateModal(modal); e != nil {
			writeFormError(w, e)
			return
		}
		it.Modal = modal
	default:
		writeFormError(w, invalid("type", "BASE_TYPE_CHOICES", "Value must be one of {1, 4, 5, 6, 7, 8, 9, 10, 12}."))
		return
	}
	it.ResponseType, it.Response = cb.Type, body
	s.notify()
	w.WriteHeader(204)
}

// callbackAllowed applies Discord's table of callback types: 6 and 7 only
// for component interactions (and modal submits from a component's
// message), 9 never for a modal submit.
func callbackAllowed(it *Interaction, typ int) *formError {
	switch typ {
	case 6, 7:
		if it.Type == 3 || (it.Type == 5 && it.MessageID != "") {
			return nil
		}
		return invalid("type", "INTERACTION_RESPONSE_TYPE_INVALID", "Interaction response type %d is only valid for component interactions", typ)
	case 9:
		if it.Type == 5 {
			return invalid("type", "INTERACTION_RESPONSE_TYPE_INVALID", "A modal cannot answer a modal submit")
		}
	}
	return nil
}

// empty reports whether a new message would have nothing to show.
func (o *outgoing) empty() bool {
	return (o.Content == nil || *o.Content == "") && len(o.Embeds) == 0 && len(o.files) == 0 && len(o.Components) == 0
}

// editEmpties reports whether an edit would leave a message with no
// content, components, embeds or files (Discord answers 50006); caller
// holds s.mu.
func (s *Server) editEmpties(m *Message, o *outgoing) bool {
	content, comps, embeds := m.Content, len(m.Components), len(m.Embeds)
	if o.Content != nil {
		content = *o.Content
	}
	if o.hasComponents {
		comps = len(o.Components)
	}
	if o.Embeds != nil {
		embeds = len(o.Embeds)
	}
	return content == "" && comps == 0 && embeds == 0 && len(keptFiles(m, o))+len(o.files) == 0
}

// keptFiles are the message's files an edit keeps: all of them, unless the
// edit lists attachments, then only the listed ones.
func keptFiles(m *Message, o *outgoing) []File {
	if !o.hasAttachments {
		return m.Files
	}
	keep := map[string]bool{}
	for _, a := range o.attachments {
		var id string
		if json.Unmarshal(a.ID, &id) != nil {
			id = string(a.ID)
		}
		keep[id] = true
	}
	var out []File
	for i, f := range m.Files {
		if keep[m.attachmentID(i)] {
			out = append(out, f)
		}
	}
	return out
}

// tokenExpired answers 401 50027 once an interaction token is older than
// its 15 minutes; caller holds s.mu.
func (s *Server) tokenExpired(w http.ResponseWriter, it *Interaction) bool {
	if time.Since(time.Unix(0, it.Created)) > s.TokenTTL {
		apiError(w, 401, 50027, "Invalid Webhook Token")
		return true
	}
	return false
}

func (s *Server) original(w http.ResponseWriter, r *http.Request, token string) {
	var o *outgoing
	if r.Method == "PATCH" {
		var ok bool
		if o, ok = readMessageBody(w, r); !ok {
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.interactions[token]
	if ok && s.tokenExpired(w, it) {
		return
	}
	if !ok || it.OriginalID == "" {
		apiError(w, 404, 10015, "Unknown Webhook")
		return
	}
	m := s.messages[it.OriginalID]
	if m.Deleted {
		apiError(w, 404, 10008, "Unknown Message")
		return
	}
	switch r.Method {
	case "PATCH":
		if s.archivedThread(w, m.ChannelID) {
			return
		}
		if s.editEmpties(m, o) {
			apiError(w, 400, 50006, "Cannot send an empty message")
			return
		}
		m.Flags &^= 128
		s.applyEdit(m, o)
	case "DELETE":
		m.Deleted = true
		s.notify()
		w.WriteHeader(204)
		return
	}
	writeJSON(w, 200, s.messageJSON(m))
}

func (s *Server) followup(w http.ResponseWriter, r *http.Request, token string) {
	o, ok := readMessageBody(w, r)
	if !ok {
		return
	}
	if o.empty() {
		apiError(w, 400, 50006, "Cannot send an empty message")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.interactions[token]
	if ok && s.tokenExpired(w, it) {
		return
	}
	if !ok || it.ResponseType == 0 {
		apiError(w, 404, 10015, "Unknown Webhook")
		return
	}
	m := &Message{ID: s.id(), ChannelID: it.ChannelID, GuildID: it.GuildID, Author: s.botByGuild(it.GuildID).user(),
		Components: o.Components, Embeds: o.Embeds, Files: o.files, Flags: o.Flags, Interaction: token, Ephemeral: o.Flags&64 != 0}
	if o.Content != nil {
		m.Content = *o.Content
	}
	it.Followups = append(it.Followups, m.ID)
	s.addMessage(m)
	if r.URL.Query().Get("wait") == "true" {
		writeJSON(w, 200, s.messageJSON(m))
		return
	}
	w.WriteHeader(204)
}

func (s *Server) editFollowup(w http.ResponseWriter, r *http.Request, token, msgID string) {
	var o *outgoing
	if r.Method == "PATCH" {
		var ok bool
		if o, ok = readMessageBody(w, r); !ok {
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.interactions[token]
	if ok && s.tokenExpired(w, it) {
		return
	}
	if !ok || !slices.Contains(it.Followups, msgID) {
		apiError(w, 404, 10008, "Unknown Message")
		return
	}
	m := s.messages[msgID]
	if m.Deleted {
		apiError(w, 404, 10008, "Unknown Message")
		return
	}
	if r.Method == "DELETE" {
		m.Deleted = true
		s.notify()
		w.WriteHeader(204)
		return
	}
	if s.archivedThread(w, m.ChannelID) {
		return
	}
	if s.editEmpties(m, o) {
		apiError(w, 400, 50006, "Cannot send an empty message")
		return
	}
	s.applyEdit(m, o)
	writeJSON(w, 200, s.messageJSON(m))
}

func (s *Server) serveAttachment(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	data, ok := s.attachments[r.URL.Path]
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	_, _ = w.Write(data)
}
