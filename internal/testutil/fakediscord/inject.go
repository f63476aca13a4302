package fakediscord

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"
	"time"
)

// NewUser returns a person to act as; their id is a fresh snowflake.
func (s *Server) NewUser(name string) User { return User{ID: s.id(), Name: name} }

// channel returns a channel; caller holds s.mu.
func (s *Server) channel(id string) (*Channel, error) {
	c, ok := s.channels[id]
	if !ok {
		return nil, fmt.Errorf("unknown channel %s", id)
	}
	return c, nil
}

// do runs fn under the lock and fails the test (after unlocking) on error.
func do[T any](s *Server, fn func() (T, error)) T {
	s.t.Helper()
	s.mu.Lock()
	v, err := fn()
	s.mu.Unlock()
	if err != nil {
		s.fatalf("%v", err)
	}
	return v
}

// Post makes user send a message (with optional attachments) to a channel
// or thread, dispatching MESSAGE_CREATE to the bot of its guild.
func (s *Server) Post(channelID string, user User, content string, files ...File) *Message {
	s.t.Helper()
	return do(s, func() (*Message, error) {
		c, err := s.channel(channelID)
		if err != nil {
			return nil, err
		}
		for i := range files {
			files[i].Name = discordFileName(files[i].Name)
		}
		if c.Archived && !c.Locked { // a person's post unarchives, as a bot's does
			c.Archived = false
			s.dispatchGuild(c.GuildID, "THREAD_UPDATE", c.json())
		}
		m := &Message{ID: s.id(), ChannelID: channelID, GuildID: c.GuildID, Author: user, Content: content, Files: files}
		s.addMessage(m)
		return m.clone(), nil
	})
}

// discordFileName is what Discord makes of an uploaded file's name: no
// directories, no spaces.
func discordFileName(name string) string {
	name = path.Base(strings.ReplaceAll(name, "\\", "/"))
	name = strings.ReplaceAll(name, " ", "_")
	if name == "." || name == ".." || name == "/" {
		return "unknown"
	}
	return name
}

// newInteraction registers and dispatches an interaction; caller holds s.mu.
func (s *Server) newInteraction(typ int, channelID, messageID string, user User, data map[string]any) (*Interaction, error) {
	c, err := s.channel(channelID)
	if err != nil {
		return nil, err
	}
	it := &Interaction{ID: s.id(), Token: "itok_" + s.id(), Type: typ, ChannelID: channelID, GuildID: c.GuildID, User: user,
		MessageID: messageID, Data: data, Created: time.Now().UnixNano()}
	s.interactions[it.Token] = it
	bot := s.botByGuild(c.GuildID)
	payload := map[string]any{
		"id": it.ID, "application_id": bot.UserID, "type": typ, "token": it.Token, "version": 1,
		"guild_id": c.GuildID, "channel_id": channelID, "channel": c.json(), // Discord sends the partial channel too
		"member": map[string]any{"user": userJSON(user), "roles": []any{}, "joined_at": timestamp(), "nick": nil, "deaf": false,
			"mute": false, "flags": 0, "pending": false, "permissions": "2248473465835073"},
		"app_permissions": "2248473465835073", "locale": "en-US", "guild_locale": "en-US", "entitlements": []any{}, "context": 0,
		"data": data,
	}
	if messageID != "" {
		payload["message"] = s.messageJSON(s.messages[messageID])
	}
	s.dispatchGuild(c.GuildID, "INTERACTION_CREATE", payload)
	s.notify()
	return it, nil
}

// component finds a usable component on the message's current version;
// caller holds s.mu.
func (s *Server) component(msgID, customID string, wantType float64) (*Message, error) {
	m, ok := s.messages[msgID]
	if !ok || m.Deleted {
		return nil, fmt.Errorf("no message %s to interact with", msgID)
	}
	c := m.Component(customID)
	switch {
	case c == nil:
		return nil, fmt.Errorf("message %s has no component %q (it has %q)", msgID, customID, m.CustomIDs())
	case c["type"] != wantType:
		return nil, fmt.Errorf("component %q is of type %v, not %v", customID, c["type"], wantType)
	}
	if d, _ := c["disabled"].(bool); d {
		return nil, fmt.Errorf("component %q is disabled", customID)
	}
	return m, nil
}

// Click presses a button on a message.
func (s *Server) Click(msgID, customID string, user User) *Interaction {
	s.t.Helper()
	return do(s, func() (*Interaction, error) {
		m, err := s.component(msgID, customID, 2)
		if err != nil {
			return nil, err
		}
		return s.newInteraction(3, m.ChannelID, m.ID, user, map[string]any{"custom_id": customID, "component_type": 2})
	})
}

// ClickStale sends a button interaction for a custom_id whether or not the
// message still shows it, as a client holding an old render would.
func (s *Server) ClickStale(msgID, customID string, user User) *Interaction {
	s.t.Helper()
	return do(s, func() (*Interaction, error) {
		m, ok := s.messages[msgID]
		if !ok {
			return nil, fmt.Errorf("no message %s", msgID)
		}
		return s.newInteraction(3, m.ChannelID, m.ID, user, map[string]any{"custom_id": customID, "component_type": 2})
	})
}

// Select chooses values in a string select menu.
func (s *Server) Select(msgID, customID string, user User, values ...string) *Interaction {
	s.t.Helper()
	return do(s, func() (*Interaction, error) {
		m, err := s.component(msgID, customID, 3)
		if err != nil {
			return nil, err
		}
		return s.newInteraction(3, m.ChannelID, m.ID, user, map[string]any{"custom_id": customID, "component_type": 3, "values": values})
	})
}

// SubmitModal submits the modal the bot opened in answer to it, with values
// by text input custom_id.
func (s *Server) SubmitModal(it *Interaction, user User, values map[string]string) *Interaction {
	s.t.Helper()
	return do(s, func() (*Interaction, error) {
		cur := s.interactions[it.Token]
		if cur == nil || cur.Modal == nil {
			return nil, fmt.Errorf("interaction %s opened no modal", it.Token)
		}
		var rows []any
		inputs := map[string]bool{}
		rawRows, _ := cur.Modal["components"].([]any)
		for _, r := range rawRows {
			rm, _ := r.(map[string]any)
			if rm["type"] == float64(18) { // a Label holds one component
				cm, _ := rm["component"].(map[string]any)
				id, _ := cm["custom_id"].(string)
				inputs[id] = true
				rows = append(rows, map[string]any{"type": 18, "component": map[string]any{"type": 4, "custom_id": id, "value": values[id]}})
				continue
			}
			inner, _ := rm["components"].([]any)
			for _, c := range inner {
				cm, _ := c.(map[string]any)
				id, _ := cm["custom_id"].(string)
				inputs[id] = true
				rows = append(rows, map[string]any{"type": 1, "components": []any{map[string]any{"type": 4, "custom_id": id, "value": values[id]}}})
			}
		}
		for id := range values {
			if !inputs[id] {
				return nil, fmt.Errorf("modal %v has no input %q", cur.Modal["custom_id"], id)
			}
		}
		return s.newInteraction(5, cur.ChannelID, cur.MessageID, user, map[string]any{"custom_id": cur.Modal["custom_id"], "components": rows})
	})
}

// Command runs a slash command the bot registered (guild or global) in a
// channel; options are by name (string, int, bool or float64 values).
func (s *Server) Command(channelID, name string, user User, opts map[string]any) *Interaction {
	s.t.Helper()
	return do(s, func() (*Interaction, error) {
		c, err := s.channel(channelID)
		if err != nil {
			return nil, err
		}
		cmd, ok := s.registeredCommand(c.GuildID, name) // autocomplete.go
		if !ok {
			return nil, fmt.Errorf("command /%s was never registered", name)
		}
		var options []any
		for _, k := range slices.Sorted(maps.Keys(opts)) {
			typ := 3
			switch opts[k].(type) {
			case int:
				typ = 4
			case bool:
				typ = 5
			case float64:
				typ = 10
			}
			value := opts[k]
			if o, ok := registeredOption(cmd, k); ok {
				var err error
				if typ, value, err = optionValue(o, value); err != nil {
					return nil, err
				}
			}
			options = append(options, map[string]any{"name": k, "type": typ, "value": value})
		}
		return s.newInteraction(2, channelID, "", user, map[string]any{"id": cmd["id"], "name": name, "type": 1, "guild_id": c.GuildID, "options": nonNil(options)})
	})
}

// StartThread makes user start a public thread under a channel, as the
// Discord client does, and returns its id: THREAD_CREATE, then the
// THREAD_CREATED (18) system message in the parent channel, authored by
// user, content = the thread's name.
func (s *Server) StartThread(parentID, name string, user User) string {
	s.t.Helper()
	return do(s, func() (string, error) {
		parent, err := s.channel(parentID)
		if err != nil {
			return "", err
		}
		th := &Channel{ID: s.id(), GuildID: parent.GuildID, ParentID: parentID, Type: 11, Name: name}
		s.createThread(th, user, false)
		return th.ID, nil
	})
}

// ArchiveThread archives (and optionally locks) a thread, as a person
// would; AutoArchive is Discord's inactivity timer.
func (s *Server) ArchiveThread(threadID string, locked bool) {
	s.t.Helper()
	do(s, func() (struct{}, error) {
		c, err := s.channel(threadID)
		if err != nil {
			return struct{}{}, err
		}
		c.Archived, c.Locked = true, locked
		s.dispatchGuild(c.GuildID, "THREAD_UPDATE", c.json())
		s.notify()
		return struct{}{}, nil
	})
}

// Channel returns a copy of a channel or thread.
func (s *Server) Channel(id string) (Channel, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.channels[id]
	if !ok {
		return Channel{}, false
	}
	return *c, true
}

// Threads returns the threads under a channel.
func (s *Server) Threads(parentID string) []Channel {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Channel
	for _, c := range s.channels {
		if c.ParentID == parentID {
			out = append(out, *c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Messages returns copies of a channel's messages in order, deleted ones included.
func (s *Server) Messages(channelID string) []*Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*Message
	for _, id := range s.order[channelID] {
		out = append(out, s.messages[id].clone())
	}
	return out
}

// Message returns a copy of a message as it stands now.
func (s *Server) Message(id string) (*Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.messages[id]
	if !ok {
		return nil, false
	}
	return m.clone(), true
}

// WaitMessage waits for a message (in any channel) that satisfies pred and
// returns a copy, or fails the test listing what was posted.
func (s *Server) WaitMessage(timeout time.Duration, what string, pred func(*Message) bool) *Message {
	s.t.Helper()
	var found *Message
	ok := s.waitFor(timeout, func() bool {
		for _, ids := range s.order {
			for _, id := range ids {
				if m := s.messages[id]; pred(m) {
					found = m.clone()
					return true
				}
			}
		}
		return false
	})
	if !ok {
		s.fatalf("no message %s within %v; messages:\n%s", what, timeout, s.dump())
	}
	return found
}

// WaitResponse waits until the bot has answered the interaction and returns
// its current state.
func (s *Server) WaitResponse(it *Interaction, timeout time.Duration) *Interaction {
	s.t.Helper()
	var cur Interaction
	ok := s.waitFor(timeout, func() bool {
		i := s.interactions[it.Token]
		cur = *i
		return i.ResponseType != 0 || i.Late
	})
	if !ok {
		s.fatalf("interaction %s (%v) was never answered", it.Token, it.Data)
	}
	return &cur
}

// Interaction returns the current state of an interaction.
func (s *Server) Interaction(token string) (Interaction, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.interactions[token]
	if !ok {
		return Interaction{}, false
	}
	return *it, true
}

func (s *Server) dump() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	chans := make([]string, 0, len(s.order))
	for c := range s.order {
		chans = append(chans, c)
	}
	slices.Sort(chans)
	for _, c := range chans {
		for _, id := range s.order[c] {
			m := s.messages[id]
			fmt.Fprintf(&b, "  #%s %s by %s: %q components=%q deleted=%v\n", c, m.ID, m.Author.Name, m.Content, m.CustomIDs(), m.Deleted)
		}
	}
	return b.String()
}
