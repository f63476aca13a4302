package fakediscord

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// Creating a channel with permission_overwrites (Discord's Create Guild
// Channel): each overwrite needs an id and a type of 0 (role) or 1
// (member), 400 50035 otherwise; a bot may allow or deny only permissions
// it has in the guild, and Manage Roles only as an administrator, 403
// 50013 otherwise.

// permManageRoles is MANAGE_ROLES.
const permManageRoles int64 = 1 << 28

// overwriteRequest is ChannelPermissionOverwriteRequest: allow and deny
// come as integers or as strings of digits (discordgo sends strings).
type overwriteRequest struct {
	ID    string          `json:"id"`
	Type  *int            `json:"type"`
	Allow json.RawMessage `json:"allow"`
	Deny  json.RawMessage `json:"deny"`
}

func permBits(raw json.RawMessage) (int64, bool) {
	s := strings.Trim(string(raw), `"`)
	if s == "" || s == "null" {
		return 0, true
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil && v >= 0
}

// createOverwrites checks a create's overwrites and returns them, or
// answers the error and returns ok false; caller holds s.mu.
func (s *Server) createOverwrites(w http.ResponseWriter, bot *Bot, reqs []overwriteRequest) ([]overwrite, bool) {
	have := s.botPermissions(bot, "")
	var out []overwrite
	for _, r := range reqs {
		allow, okA := permBits(r.Allow)
		deny, okD := permBits(r.Deny)
		if r.ID == "" || r.Type == nil || (*r.Type != OverwriteRole && *r.Type != OverwriteMember) || !okA || !okD {
			apiError(w, 400, 50035, "Invalid Form Body")
			return nil, false
		}
		admin := have&permAdministrator != 0
		if !admin && ((allow|deny)&^have != 0 || (allow|deny)&permManageRoles != 0) {
			apiError(w, 403, 50013, "Missing Permissions")
			return nil, false
		}
		out = append(out, overwrite{ID: r.ID, Type: *r.Type, Allow: allow, Deny: deny})
	}
	return out, true
}

// overwritesJSON renders overwrites as Discord does (bits as strings).
func overwritesJSON(ows []overwrite) []any {
	out := []any{}
	for _, o := range ows {
		out = append(out, map[string]any{"id": o.ID, "type": o.Type, "allow": strconv.FormatInt(o.Allow, 10), "deny": strconv.FormatInt(o.Deny, 10)})
	}
	return out
}

// CanView reports whether a user (with no roles: the fake's users have
// none) or the bot may view a channel of the bot's guild, as Discord
// computes it: @everyone's permissions, the @everyone overwrite, then the
// user's own overwrite; a thread by its parent's, and a private thread
// only by its members and those with Manage Threads (private_threads.go).
func (s *Server) CanView(b *Bot, channelID, userID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	at := channelID
	th := s.channels[channelID]
	if th != nil && th.isThread() {
		at = th.ParentID
	} else {
		th = nil
	}
	var p int64
	if userID == b.UserID {
		p = s.botPermissions(b, at)
	} else {
		a := s.app(b)
		p = a.everyone
		for _, o := range a.overwrites[at] {
			if o.Type == OverwriteRole && o.ID == b.GuildID {
				p = p&^o.Deny | o.Allow
			}
		}
		for _, o := range a.overwrites[at] {
			if o.Type == OverwriteMember && o.ID == userID {
				p = p&^o.Deny | o.Allow
			}
		}
	}
	if p&PermViewChannel == 0 {
		return false
	}
	return th == nil || threadVisible(th, userID, p)
}
