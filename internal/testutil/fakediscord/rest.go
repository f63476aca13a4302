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
	if !tokenRoute {
		bot = s.botByToken(r.Header.Get("Authorization"))
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
			"session_start_limit": map[string]any{"total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1}})
	case is("GET", "users", "@me"):
		writeJSON(w, 200, userJSON(bot.user()))
	case is("GET", "channels", "*"):
		s.getChannel(w, seg[1])
	case is("PATCH", "channels", "*"):
		s.editChannel(w, r, seg[1])
	case is("POST", "channels", "*", "messages"):
		s.createMessage(w, r, bot, seg[1])
	case is("GET", "channels", "*", "messages", "*"):
		s.getMessage(w, seg[1], seg[3])
	case is("PATCH", "channels", "*", "messages", "*"):
		s.editMessage(w, r, bot, seg[1], seg[3])
	case is("DELETE", "channels", "*", "messages", "*"):
		s.deleteMessage(w, seg[1], seg[3])
	case is("POST", "channels", "*", "typing"):
		s.typing(w, seg[1])
	case is("PUT", "channels", "*", "messages", "*", "reactions", "*", "@me"):
		s.react(w, seg[1], seg[3], seg[5])
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
	hasComponents   bool
	files           []File
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
		data, _ := io.ReadAll(part)
		if part.FormName() == "payload_json" {
			body = data
		} else {
			files = append(files, File{Name: part.FileName(), ContentType: part.Header.Get("Content-Type"), Data: data})
		}
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
	if p := o.validate(); p != "" {
		apiError(w, 400, 50035, "Invalid Form Body: "+p)
		return nil, false
	}
	return o, true
}

// channelMessage finds a message that stands in a channel, answering 10008
// otherwise; caller holds s.mu.
func (s *Server) channelMessage(w http.ResponseWriter, chID, msgID string) (*Message, bool) {
	if _, ok := s.channels[chID]; !ok {
		apiError(w, 404, 10003, "Unknown Channel")
		return nil, false
	}
	m, ok := s.messages[msgID]
	if !ok || m.ChannelID != chID || m.Deleted {
		apiError(w, 404, 10008, "Unknown Message")
		return nil, false
	}
	return m, true
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

// validate applies Discord's limits; it returns a 50035-style problem or "".
func (o *outgoing) validate() string {
	if o.Content != nil && len([]rune(*o.Content)) > 2000 {
		return "content: Must be 2000 or fewer in length."
	}
	if len(o.Components) > 5 {
		return "components: Must be 5 or fewer in length."
	}
	seen := map[string]bool{}
	for _, row := range o.Components {
		inner, _ := row["components"].([]any)
		if len(inner) > 5 {
			return "components.components: Must be 5 or fewer in length."
		}
		for _, c := range inner {
			cm, _ := c.(map[string]any)
			typ, _ := cm["type"].(float64)
			if typ == 3 && len(inner) > 1 {
				return "components: a select menu must be alone in its row"
			}
			if typ == 2 && cm["style"] == float64(5) {
				continue // link buttons have a url, not a custom_id
			}
			id, _ := cm["custom_id"].(string)
			if id == "" || len(id) > 100 {
				return "components.custom_id: Must be between 1 and 100 in length."
			}
			if seen[id] {
				return "components.custom_id: Component custom id cannot be duplicated"
			}
			seen[id] = true
		}
	}
	return ""
}

func (s *Server) getChannel(w http.ResponseWriter, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.channels[id]
	if !ok {
		apiError(w, 404, 10003, "Unknown Channel")
		return
	}
	writeJSON(w, 200, c.json())
}

func (s *Server) editChannel(w http.ResponseWriter, r *http.Request, id string) {
	var body struct {
		Archived *bool   `json:"archived"`
		Locked   *bool   `json:"locked"`
		Name     *string `json:"name"`
	}
	_ = json.NewDecoder(r.Body).Decode(&body)
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.channels[id]
	if !ok {
		apiError(w, 404, 10003, "Unknown Channel")
		return
	}
	if body.Archived != nil {
		c.Archived = *body.Archived
	}
	if body.Locked != nil {
		c.Locked = *body.Locked
	}
	if body.Name != nil {
		c.Name = *body.Name
	}
	s.dispatchGuild(c.GuildID, "THREAD_UPDATE", c.json())
	writeJSON(w, 200, c.json())
}

func (s *Server) createMessage(w http.ResponseWriter, r *http.Request, bot *Bot, chID string) {
	o, ok := readMessageBody(w, r)
	if !ok {
		return
	}
	if (o.Content == nil || *o.Content == "") && len(o.Embeds) == 0 && len(o.files) == 0 && len(o.Components) == 0 {
		apiError(w, 400, 50006, "Cannot send an empty message")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.channels[chID]
	if !ok || c.GuildID != bot.GuildID {
		apiError(w, 404, 10003, "Unknown Channel")
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
	m := &Message{ID: s.id(), ChannelID: chID, GuildID: c.GuildID, Author: bot.user(), Components: o.Components,
		Embeds: o.Embeds, Files: o.files, Flags: o.Flags, AllowedMentions: o.AllowedMentions, Nonce: nonce}
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
	for i, f := range m.Files {
		s.attachments[fmt.Sprintf("/attachments/%s/%s%d/%s", m.ChannelID, m.ID, i, f.Name)] = f.Data
	}
	if !m.Ephemeral {
		s.dispatchGuild(m.GuildID, "MESSAGE_CREATE", s.messageJSON(m))
	}
	s.notify()
}

func (s *Server) getMessage(w http.ResponseWriter, chID, msgID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.channelMessage(w, chID, msgID)
	if !ok {
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
	m, ok := s.channelMessage(w, chID, msgID)
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
	s.applyEdit(m, o)
	writeJSON(w, 200, s.messageJSON(m))
}

// applyEdit changes a message; caller holds s.mu.
func (s *Server) applyEdit(m *Message, o *outgoing) {
	if o.Content != nil {
		m.Content = *o.Content
	}
	if o.hasComponents {
		m.Components = o.Components
	}
	if o.Embeds != nil {
		m.Embeds = o.Embeds
	}
	if len(o.files) > 0 {
		m.Files = append(m.Files, o.files...)
	}
	m.Edits++
	if !m.Ephemeral {
		s.dispatchGuild(m.GuildID, "MESSAGE_UPDATE", s.messageJSON(m))
	}
	s.notify()
}

func (s *Server) deleteMessage(w http.ResponseWriter, chID, msgID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.channelMessage(w, chID, msgID)
	if !ok {
		return
	}
	m.Deleted = true
	s.dispatchGuild(m.GuildID, "MESSAGE_DELETE", map[string]any{"id": m.ID, "channel_id": m.ChannelID, "guild_id": m.GuildID})
	s.notify()
	w.WriteHeader(204)
}

func (s *Server) typing(w http.ResponseWriter, chID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.channels[chID]; !ok {
		apiError(w, 404, 10003, "Unknown Channel")
		return
	}
	w.WriteHeader(204)
}

func (s *Server) react(w http.ResponseWriter, chID, msgID, emoji string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.channelMessage(w, chID, msgID)
	if !ok || s.archivedThread(w, chID) {
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
	}
	_ = json.NewDecoder(r.Body).Decode(&body)
	s.mu.Lock()
	defer s.mu.Unlock()
	parent, ok := s.channels[chID]
	if !ok || parent.GuildID != bot.GuildID {
		apiError(w, 404, 10003, "Unknown Channel")
		return
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
	s.createThread(th, bot.user(), fromMsg != "")
	writeJSON(w, 201, th.json())
}

func (s *Server) putCommands(w http.ResponseWriter, r *http.Request, scope string) {
	var cmds []map[string]any
	if err := json.NewDecoder(r.Body).Decode(&cmds); err != nil {
		apiError(w, 400, 50109, "The request body contains invalid JSON.")
		return
	}
	var out []json.RawMessage
	for _, c := range cmds {
		name, _ := c["name"].(string)
		if name == "" || name != strings.ToLower(name) {
			apiError(w, 400, 50035, "Invalid Form Body: name: Command name is invalid")
			return
		}
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
	it.ResponseType, it.Response = cb.Type, body
	switch cb.Type {
	case 4, 5: // message, deferred message
		if p := data.validate(); p != "" {
			apiError(w, 400, 50035, "Invalid Form Body: "+p)
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
		if p := data.validate(); p != "" {
			apiError(w, 400, 50035, "Invalid Form Body: "+p)
			return
		}
		m := s.messages[it.MessageID]
		if m == nil {
			apiError(w, 400, 50035, "Invalid Form Body: no message to update")
			return
		}
		// InteractionResponseData.Content has no omitempty: an update
		// without content clears the text, as on Discord.
		if data.Content == nil {
			empty := ""
			data.Content = &empty
		}
		s.applyEdit(m, data)
		it.OriginalID = m.ID
	case 6: // deferred update: @original is the message the component is on
		it.OriginalID = it.MessageID
	case 9: // modal
		var modal map[string]any
		_ = json.Unmarshal(cb.Data, &modal)
		if modal["title"] == nil || modal["title"] == "" || modal["custom_id"] == nil || modal["custom_id"] == "" {
			it.ResponseType = 0
			apiError(w, 400, 50035, "Invalid Form Body: a modal needs a title and a custom_id")
			return
		}
		it.Modal = modal
	}
	s.notify()
	w.WriteHeader(204)
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
	if !ok || it.OriginalID == "" {
		apiError(w, 404, 10015, "Unknown Webhook")
		return
	}
	m := s.messages[it.OriginalID]
	switch r.Method {
	case "PATCH":
		if s.archivedThread(w, m.ChannelID) {
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
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.interactions[token]
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
	if !ok || !slices.Contains(it.Followups, msgID) {
		apiError(w, 404, 10008, "Unknown Message")
		return
	}
	m := s.messages[msgID]
	if r.Method == "DELETE" {
		m.Deleted = true
		s.notify()
		w.WriteHeader(204)
		return
	}
	if s.archivedThread(w, m.ChannelID) {
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
