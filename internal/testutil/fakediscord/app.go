package fakediscord

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// What `ccbridge setup` and `ccbridge doctor` read: the bot's application
// (owner, intent flags), the servers it has joined, their channels, and the
// bot's computed permissions (roles and channel overwrites).

// Application flags for the Message Content intent (Discord's bits).
const (
	AppFlagMessageContent        = 1 << 18
	AppFlagMessageContentLimited = 1 << 19
)

// Permission bits the fake knows by name.
const (
	PermManageChannels int64 = 1 << 4
	PermAddReactions   int64 = 1 << 6
	PermViewChannel    int64 = 1 << 10
	PermSendMessages   int64 = 1 << 11
	PermEmbedLinks     int64 = 1 << 14
	PermAttachFiles    int64 = 1 << 15
	PermReadHistory    int64 = 1 << 16
	PermManageThreads  int64 = 1 << 34
	PermCreateThreads  int64 = 1 << 35
	PermSendInThreads  int64 = 1 << 38
	// PermInvite is what the README's invite URL grants the bot's role.
	PermInvite = PermViewChannel | PermSendMessages | PermSendInThreads | PermCreateThreads | PermManageThreads |
		PermReadHistory | PermAttachFiles | PermAddReactions | PermEmbedLinks | PermCreatePrivateThreads
)

// Overwrite types.
const (
	OverwriteRole   = 0
	OverwriteMember = 1
)

type overwrite struct {
	ID          string
	Type        int
	Allow, Deny int64
}

// appState is one bot's application and membership; guarded by s.mu.
type appState struct {
	ownerID    string
	flags      int
	left       bool  // the bot has not joined (or has left) its guild
	everyone   int64 // @everyone's permissions
	botRole    string
	botPerms   int64 // the bot's managed role's permissions
	guildName  string
	overwrites map[string][]overwrite // channel id → overwrites
}

// app returns a bot's application state, creating the default: owned by a
// user of its own, Message Content enabled (the _LIMITED flag, as the
// portal's toggle sets it), joined, with the invite's permissions; caller
// holds s.mu.
func (s *Server) app(b *Bot) *appState {
	if s.apps == nil {
		s.apps = map[*Bot]*appState{}
	}
	a := s.apps[b]
	if a == nil {
		a = &appState{ownerID: s.id(), flags: AppFlagMessageContentLimited, everyone: PermViewChannel | PermSendMessages | PermReadHistory,
			botRole: s.id(), botPerms: PermInvite, guildName: b.Name + "'s server", overwrites: map[string][]overwrite{}}
		if b.DenyMessageContent {
			a.flags = 0
		}
		s.apps[b] = a
	}
	return a
}

// SetAppOwner makes userID the owner of the bot's application.
func (s *Server) SetAppOwner(b *Bot, userID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.app(b).ownerID = userID
}

// SetMessageContentIntent turns the bot's Message Content intent on or off
// in its (fake) developer portal: the application's flags and the gateway's
// 4014 for IDENTIFY with that intent follow.
func (s *Server) SetMessageContentIntent(b *Bot, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.app(b)
	if on {
		a.flags |= AppFlagMessageContentLimited
	} else {
		a.flags &^= AppFlagMessageContent | AppFlagMessageContentLimited
	}
	b.DenyMessageContent = !on
	s.notify()
}

// LeaveGuild makes the bot not (yet) a member of its guild: the guild list
// is empty and the guild's routes answer 403 50001.
func (s *Server) LeaveGuild(b *Bot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.app(b).left = true
	s.notify()
}

// JoinGuild adds the bot to its guild, as opening the invite URL does.
func (s *Server) JoinGuild(b *Bot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.app(b).left = false
	s.notify()
}

// SetBotPermissions sets the permissions of the bot's own role.
func (s *Server) SetBotPermissions(b *Bot, perms int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.app(b).botPerms = perms
}

// DenyBotInChannel adds a member overwrite for the bot in a channel that
// denies perms (and allows nothing).
func (s *Server) DenyBotInChannel(b *Bot, channelID string, perms int64) {
	s.SetOverwrite(b, channelID, b.UserID, OverwriteMember, 0, perms)
}

// SetOverwrite sets (replaces) a channel's permission overwrite for a role
// (the guild id is @everyone) or a member.
func (s *Server) SetOverwrite(b *Bot, channelID, targetID string, typ int, allow, deny int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.app(b)
	list := a.overwrites[channelID]
	for i, o := range list {
		if o.ID == targetID {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	a.overwrites[channelID] = append(list, overwrite{ID: targetID, Type: typ, Allow: allow, Deny: deny})
}

// BotPermissions computes the bot's permissions in a channel of its guild
// as Discord does (roles, then @everyone, role and member overwrites;
// Administrator has everything).
func (s *Server) BotPermissions(b *Bot, channelID string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.botPermissions(b, channelID)
}

const permAdministrator int64 = 1 << 3

// botPermissions: caller holds s.mu. channelID "" = guild-level.
func (s *Server) botPermissions(b *Bot, channelID string) int64 {
	a := s.app(b)
	p := a.everyone | a.botPerms
	if p&permAdministrator != 0 {
		return 1<<53 - 1
	}
	var roleAllow, roleDeny int64
	for _, o := range a.overwrites[channelID] {
		switch {
		case o.Type == OverwriteRole && o.ID == b.GuildID:
			p = p&^o.Deny | o.Allow
		case o.Type == OverwriteRole && o.ID == a.botRole:
			roleAllow |= o.Allow
			roleDeny |= o.Deny
		}
	}
	p = p&^roleDeny | roleAllow
	for _, o := range a.overwrites[channelID] {
		if o.Type == OverwriteMember && o.ID == b.UserID {
			p = p&^o.Deny | o.Allow
		}
	}
	return p
}

// WaitCall waits until the fake has answered n calls of method on path
// (below /api/vN, exact) and reports whether it did within timeout.
func (s *Server) WaitCall(method, path string, n int, timeout time.Duration) bool {
	return s.waitFor(timeout, func() bool {
		k := 0
		for _, c := range s.calls {
			if c.Method == method && c.Path == path {
				k++
			}
		}
		return k >= n
	})
}

// routeApp serves the application, guild and membership routes; it
// reports whether it handled the call.
func (s *Server) routeApp(w http.ResponseWriter, r *http.Request, bot *Bot, seg []string) bool {
	m, n := r.Method, len(seg)
	switch {
	case m == "GET" && n == 3 && seg[0] == "oauth2" && seg[1] == "applications" && seg[2] == "@me":
		s.getApplication(w, bot)
	case m == "GET" && n == 3 && seg[0] == "users" && seg[1] == "@me" && seg[2] == "guilds":
		s.userGuilds(w, bot)
	case n >= 2 && seg[0] == "guilds":
		s.mu.Lock()
		defer s.mu.Unlock()
		if seg[1] != bot.GuildID || s.app(bot).left {
			apiError(w, 403, 50001, "Missing Access")
			return true
		}
		switch {
		case m == "GET" && n == 2:
			s.getGuild(w, bot)
		case m == "GET" && n == 3 && seg[2] == "roles":
			writeJSON(w, 200, s.rolesJSON(bot))
		case m == "GET" && n == 3 && seg[2] == "channels":
			s.guildChannels(w, bot)
		case m == "POST" && n == 3 && seg[2] == "channels":
			s.createGuildChannel(w, r, bot)
		case m == "GET" && n == 4 && seg[2] == "members":
			s.guildMember(w, bot, seg[3])
		default:
			return false
		}
	default:
		return false
	}
	return true
}

func (s *Server) getApplication(w http.ResponseWriter, bot *Bot) {
	s.mu.Lock()
	a := s.app(bot)
	out := map[string]any{"id": bot.UserID, "name": bot.Name, "description": "", "bot_public": true, "bot_require_code_grant": false,
		"flags": a.flags, "owner": userJSON(User{ID: a.ownerID, Name: "owner-of-" + bot.Name}), "team": nil, "verify_key": "00"}
	s.mu.Unlock()
	writeJSON(w, 200, out)
}

func (s *Server) userGuilds(w http.ResponseWriter, bot *Bot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []any{}
	if a := s.app(bot); !a.left {
		out = append(out, map[string]any{"id": bot.GuildID, "name": a.guildName, "icon": nil, "owner": false,
			"permissions": strconv.FormatInt(s.botPermissions(bot, ""), 10), "features": []any{}})
	}
	writeJSON(w, 200, out)
}

// The handlers below run with s.mu held.

func (s *Server) rolesJSON(bot *Bot) []any {
	a := s.app(bot)
	return []any{
		map[string]any{"id": bot.GuildID, "name": "@everyone", "permissions": strconv.FormatInt(a.everyone, 10), "position": 0, "managed": false},
		map[string]any{"id": a.botRole, "name": bot.Name, "permissions": strconv.FormatInt(a.botPerms, 10), "position": 1, "managed": true},
	}
}

func (s *Server) getGuild(w http.ResponseWriter, bot *Bot) {
	a := s.app(bot)
	writeJSON(w, 200, map[string]any{"id": bot.GuildID, "name": a.guildName, "owner_id": "1", "roles": s.rolesJSON(bot),
		"features": []any{}, "emojis": []any{}})
}

func (s *Server) guildChannels(w http.ResponseWriter, bot *Bot) {
	a := s.app(bot)
	var out []any
	for _, c := range s.sortedChannels(bot.GuildID) {
		if c.isThread() {
			continue // threads are not listed with the guild's channels
		}
		m := c.json()
		m["position"] = len(out)
		ows := []any{}
		for _, o := range a.overwrites[c.ID] {
			ows = append(ows, map[string]any{"id": o.ID, "type": o.Type, "allow": strconv.FormatInt(o.Allow, 10), "deny": strconv.FormatInt(o.Deny, 10)})
		}
		m["permission_overwrites"] = ows
		out = append(out, m)
	}
	if out == nil {
		out = []any{}
	}
	writeJSON(w, 200, out)
}

// sortedChannels returns a guild's channels by id (creation order).
func (s *Server) sortedChannels(guildID string) []*Channel {
	var out []*Channel
	for _, c := range s.channels {
		if c.GuildID == guildID {
			out = append(out, c)
		}
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && idLess(out[j].ID, out[j-1].ID); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func idLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

// createGuildChannel creates a text channel. Discord requires Manage
// Channels (50013 Missing Permissions otherwise) and a name of 1 to 100
// characters (50035).
func (s *Server) createGuildChannel(w http.ResponseWriter, r *http.Request, bot *Bot) {
	var body struct {
		Name       string             `json:"name"`
		Type       int                `json:"type"`
		Overwrites []overwriteRequest `json:"permission_overwrites"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		apiError(w, 400, 50109, "The request body contains invalid JSON.")
		return
	}
	if s.botPermissions(bot, "")&PermManageChannels == 0 {
		apiError(w, 403, 50013, "Missing Permissions")
		return
	}
	name := strings.TrimSpace(body.Name)
	if name == "" || len([]rune(name)) > 100 {
		writeJSON(w, 400, map[string]any{"code": 50035, "message": "Invalid Form Body",
			"errors": map[string]any{"name": map[string]any{"_errors": []any{map[string]any{"code": "BASE_TYPE_BAD_LENGTH", "message": "Must be between 1 and 100 in length."}}}}})
		return
	}
	if body.Type != 0 {
		apiError(w, 400, 50035, "Invalid Form Body")
		return
	}
	ows, ok := s.createOverwrites(w, bot, body.Overwrites) // channel_overwrites.go
	if !ok {
		return
	}
	// Discord lowercases text channel names and joins words with dashes.
	name = strings.Join(strings.Fields(strings.ToLower(name)), "-")
	c := &Channel{ID: s.id(), GuildID: bot.GuildID, Type: 0, Name: name}
	s.channels[c.ID] = c
	s.app(bot).overwrites[c.ID] = ows
	m := c.json()
	m["position"] = 0
	m["permission_overwrites"] = overwritesJSON(ows)
	writeJSON(w, 201, m)
}

func (s *Server) guildMember(w http.ResponseWriter, bot *Bot, userID string) {
	if userID != bot.UserID {
		apiError(w, 404, 10007, "Unknown Member")
		return
	}
	writeJSON(w, 200, map[string]any{"user": userJSON(bot.user()), "roles": []any{s.app(bot).botRole}, "joined_at": timestamp(),
		"deaf": false, "mute": false, "flags": 0})
}
