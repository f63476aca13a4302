package fakediscord

import (
	"encoding/json"
	"regexp"
	"slices"
)

// Discord's allowed_mentions rules (resources/message.mdx, "Allowed
// Mentions Object"): parse holds only "roles", "users" and "everyone";
// "users" in parse and a users list are mutually exclusive; users holds at
// most 100 ids. A create that breaks one is 400 50035. Which users a
// message notifies follows from its content and allowed_mentions: with no
// allowed_mentions every <@id> in the content pings; with one, only the
// ids it allows (all of them when parse holds "users").

type allowedMentions struct {
	Parse *[]string `json:"parse"`
	Users []string  `json:"users"`
	Roles []string  `json:"roles"`
}

func validateAllowedMentions(raw json.RawMessage) *formError {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var am allowedMentions
	if err := json.Unmarshal(raw, &am); err != nil {
		return invalid("allowed_mentions", "DICT_TYPE_CONVERT", "Only dictionaries may be used in a DictType")
	}
	if am.Parse != nil {
		for i, p := range *am.Parse {
			if p != "roles" && p != "users" && p != "everyone" {
				return invalid("allowed_mentions.parse."+itoa(i), "ENUM_TYPE_COERCE", "Value %q is not a valid enum value.", p)
			}
		}
		if slices.Contains(*am.Parse, "users") && len(am.Users) > 0 {
			return invalid("allowed_mentions", "MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE", "parse:[\"users\"] and users: [ids...] are mutually exclusive.")
		}
	}
	if len(am.Users) > 100 {
		return invalid("allowed_mentions.users", "BASE_TYPE_MAX_LENGTH", "Must be 100 or fewer in length.")
	}
	return nil
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

var userMention = regexp.MustCompile(`<@!?(\d{15,21})>`)

// Mentioned returns the ids of the users a message notifies, in the order
// their mentions appear, each once.
func (s *Server) Mentioned(id string) []string {
	s.mu.Lock()
	m, ok := s.messages[id]
	var content string
	var raw json.RawMessage
	if ok {
		content, raw = m.Content, m.AllowedMentions
	}
	s.mu.Unlock()
	var am *allowedMentions
	if len(raw) > 0 && string(raw) != "null" {
		am = &allowedMentions{}
		_ = json.Unmarshal(raw, am)
	}
	var out []string
	for _, sm := range userMention.FindAllStringSubmatch(content, -1) {
		uid := sm[1]
		allowed := am == nil || (am.Parse != nil && slices.Contains(*am.Parse, "users")) || slices.Contains(am.Users, uid)
		if allowed && !slices.Contains(out, uid) {
			out = append(out, uid)
		}
	}
	return out
}
