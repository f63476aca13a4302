package fakediscord

import "strings"

// Gateway intents the fake honours (Discord's bit values).
const (
	IntentGuilds         = 1 << 0
	IntentGuildMessages  = 1 << 9
	IntentMessageContent = 1 << 15
)

// disallowed reports whether an IDENTIFY asks for the privileged Message
// Content intent that the bot's portal settings deny.
func (s *Server) disallowed(token string, intents int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.botByToken(token)
	return b != nil && b.DenyMessageContent && intents&IntentMessageContent != 0
}

// filterIntents decides whether a session receives an event and in what
// shape, as Discord does from the session's intents:
//   - GUILDS gates THREAD_* and CHANNEL_* events;
//   - GUILD_MESSAGES gates MESSAGE_* events in guilds;
//   - without MESSAGE_CONTENT, content, embeds, attachments and components
//     of other users' messages are empty unless the message mentions the bot.
//
// INTERACTION_CREATE, READY and GUILD_CREATE are always sent.
func filterIntents(sess *gwSession, t string, d any) (any, bool) {
	switch {
	case strings.HasPrefix(t, "THREAD_"), strings.HasPrefix(t, "CHANNEL_"):
		return d, sess.intents&IntentGuilds != 0
	case strings.HasPrefix(t, "MESSAGE_") && !strings.HasPrefix(t, "MESSAGE_REACTION"):
		if sess.intents&IntentGuildMessages == 0 {
			return nil, false
		}
		m, ok := d.(map[string]any)
		if !ok || sess.intents&IntentMessageContent != 0 || t == "MESSAGE_DELETE" {
			return d, true
		}
		return redactContent(m, sess.bot.UserID), true
	}
	return d, true
}

// redactContent blanks what the Message Content intent guards, unless the
// bot wrote the message or is mentioned in it.
func redactContent(m map[string]any, botID string) map[string]any {
	if a, _ := m["author"].(map[string]any); a != nil && a["id"] == botID {
		return m
	}
	content, _ := m["content"].(string)
	if strings.Contains(content, "<@"+botID+">") || strings.Contains(content, "<@!"+botID+">") {
		return m
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	if _, ok := out["content"]; ok {
		out["content"] = ""
	}
	for _, k := range []string{"embeds", "attachments", "components"} {
		if _, ok := out[k]; ok {
			out[k] = []any{}
		}
	}
	return out
}
