package fakediscord

import (
	"encoding/json"
	"net/http"
)

// Rules for several daemons sharing one bot (issue 13): reading a
// channel's history (how each machine sees the others' panel messages) and
// registering slash commands one at a time (so that no daemon overwrites
// the set another registered).
//
// Real Discord also allows several gateway sessions for one token at once,
// each receiving every event (identify in gateway.go keeps a connected
// session alive when another IDENTIFY arrives).

// routeFleet serves GET channel messages and the per-command routes; it
// reports whether it handled the call.
func (s *Server) routeFleet(w http.ResponseWriter, r *http.Request, bot *Bot, seg []string) bool {
	m, n := r.Method, len(seg)
	switch {
	case m == "GET" && n == 3 && seg[0] == "channels" && seg[2] == "messages":
		s.listMessages(w, r, bot, seg[1]) // history.go
	case n >= 5 && seg[0] == "applications" && seg[2] == "guilds" && seg[4] == "commands":
		switch {
		case m == "GET" && n == 5:
			s.guildCommands(w, bot, seg[1], seg[3])
		case m == "POST" && n == 5:
			s.upsertCommand(w, r, bot, seg[1], seg[3])
		default:
			return false
		}
	default:
		return false
	}
	return true
}

// guildCommands is GET /applications/{app}/guilds/{guild}/commands.
func (s *Server) guildCommands(w http.ResponseWriter, bot *Bot, app, guild string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.commandScope(w, bot, app, guild) {
		return
	}
	out := []json.RawMessage{}
	out = append(out, s.commands[guild]...)
	writeJSON(w, 200, out)
}

// upsertCommand is POST /applications/{app}/guilds/{guild}/commands: a
// command with a new name is added (201); one with the name of an existing
// command of the same type replaces it, keeping its id (200).
func (s *Server) upsertCommand(w http.ResponseWriter, r *http.Request, bot *Bot, app, guild string) {
	var c map[string]any
	if err := json.NewDecoder(r.Body).Decode(&c); err != nil {
		apiError(w, 400, 50109, "The request body contains invalid JSON.")
		return
	}
	if e := validateCommands([]map[string]any{c}); e != nil {
		writeFormError(w, e)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.commandScope(w, bot, app, guild) {
		return
	}
	typ := num(c["type"])
	if typ == 0 {
		typ = 1
	}
	c["type"] = typ
	list := s.commands[guild]
	status, at := 201, -1
	for i, raw := range list {
		var old map[string]any
		_ = json.Unmarshal(raw, &old)
		ot := num(old["type"])
		if ot == 0 {
			ot = 1
		}
		if old["name"] == c["name"] && ot == typ {
			status, at = 200, i
			c["id"] = old["id"]
		}
	}
	if at < 0 && len(list) >= 100 {
		writeFormError(w, invalid("_root", "BASE_TYPE_MAX_LENGTH", "Must be 100 or fewer in length."))
		return
	}
	if at < 0 {
		c["id"] = s.id()
	}
	c["application_id"], c["version"], c["guild_id"] = app, s.id(), guild
	b, _ := json.Marshal(c)
	if at < 0 {
		s.commands[guild] = append(list, b)
	} else {
		list[at] = b
	}
	s.notify()
	writeJSON(w, status, json.RawMessage(b))
}

// commandScope checks the application and guild of a command route;
// caller holds s.mu.
func (s *Server) commandScope(w http.ResponseWriter, bot *Bot, app, guild string) bool {
	if app != bot.UserID {
		apiError(w, 403, 20012, "You are not authorized to perform this action on this application")
		return false
	}
	if guild != bot.GuildID {
		apiError(w, 403, 50001, "Missing Access")
		return false
	}
	return true
}
