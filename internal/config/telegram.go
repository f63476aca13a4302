package config

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Telegram holds settings shared by every Telegram bot.
type Telegram struct {
	// APIBase is the Bot API root (a local Bot API server, a proxy, a test
	// server); files are fetched from <api_base>/file/bot<token>/<path>.
	APIBase string `toml:"api_base"`
	// CatchUp is [discord].catch_up for Telegram servers: how old a
	// message sent while the daemon was down may be and still be
	// delivered on its own. Unset: [discord].catch_up's, which held
	// Telegram servers before this key.
	CatchUp Duration `toml:"catch_up"`
}

// CatchUp is the catch_up age of server s's messages: [telegram] for a
// Telegram server that sets it, [discord] otherwise.
func (c *Config) CatchUp(s Server) time.Duration {
	if s.Telegram() && c.Telegram.CatchUp.Duration != 0 {
		return c.Telegram.CatchUp.Duration
	}
	return c.Discord.CatchUp.Duration
}

// Platforms a server may be on; a server without one is a Discord one, so
// every config written before Telegram keeps its meaning.
const (
	PlatformDiscord  = "discord"
	PlatformTelegram = "telegram"
)

// Platforms lists the allowed values of a server's platform.
var Platforms = []string{PlatformDiscord, PlatformTelegram}

// DefaultTelegramAPIBase is Telegram's own Bot API.
const DefaultTelegramAPIBase = "https://api.telegram.org"

// generalTopic is the id Telegram gives a forum's General topic: the
// server's control panel, never a project's.
const generalTopic = "1"

// Telegram reports whether the server is a Telegram bot.
func (s Server) Telegram() bool { return s.Platform == PlatformTelegram }

// TelegramChannelID is the channel id of a forum topic of a chat.
//
// The rest of ccbridge routes by channel id and knows no platform, so a
// Telegram server's ids are put in the Discord-named fields when the
// config is loaded: the server's GeneralChannelID is "<chat_id>" (the
// chat's General topic, the control panel), a project's ChannelID and a
// thread's ThreadID are "<chat_id>.<topic_id>" (a forum topic; a dot,
// since channel ids become parts of record keys, which are plain file
// names). The Telegram client reads channel ids in the same two forms.
// ChatID and TopicID keep what the file said, for messages and the summary.
func TelegramChannelID(chatID, topicID string) string { return chatID + "." + topicID }

// topicChannel is TelegramChannelID, or "" while either part is missing.
func topicChannel(chatID, topicID string) string {
	if chatID == "" || topicID == "" {
		return ""
	}
	return TelegramChannelID(chatID, topicID)
}

func (t *Telegram) applyDefaults() {
	if t.APIBase == "" {
		t.APIBase = DefaultTelegramAPIBase
	}
	t.APIBase = strings.TrimRight(t.APIBase, "/")
}

// deriveTelegramIDs fills a Telegram server's channel ids from chat_id and
// topic_id. A field the file set is left as it is, so that validation can
// tell a Discord key given on a Telegram server (its value differs from
// the derived one).
func (s *Server) deriveTelegramIDs() {
	if !s.Telegram() {
		return
	}
	fill := func(f *string, v string) {
		if *f == "" {
			*f = v
		}
	}
	fill(&s.GeneralChannelID, s.ChatID)
	for j := range s.Projects {
		p := &s.Projects[j]
		fill(&p.ChannelID, topicChannel(s.ChatID, p.TopicID))
		for k := range p.Threads {
			fill(&p.Threads[k].ThreadID, topicChannel(s.ChatID, p.Threads[k].TopicID))
		}
	}
}

// A chat id is an integer: a supergroup's is -100 then its number, a basic
// group's negative, a private chat's (a user's id) positive. Compiled when
// a Telegram server is first checked, not in every daemon's init.
var (
	tgChatID   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^-?[1-9][0-9]*$`) })
	tgPositive = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[1-9][0-9]*$`) })
)

// tgInt reports whether val is an id the Bot API can take: an integer in
// int64 written plainly, positive when it must be.
func tgInt(val string, positive bool) bool {
	re := tgChatID()
	if positive {
		re = tgPositive()
	}
	_, err := strconv.ParseInt(val, 10, 64)
	return err == nil && re.MatchString(val)
}

// telegramServer checks a Telegram server's own keys. chats maps each
// chat id to the key of its first use.
func (v *checker) telegramServer(sk string, s Server, chats map[string]string) {
	if s.GuildID != "" {
		v.errf(sk+".guild_id", "guild_id is a Discord key; a Telegram server has chat_id")
	}
	if s.GeneralChannelID != s.ChatID {
		v.errf(sk+".general_channel_id", "general_channel_id is a Discord key; a Telegram server's control panel is the General topic of its chat_id")
	}
	switch {
	case s.ChatID == "":
		v.errf(sk+".chat_id", "missing; set it to the id of the Telegram group (a forum supergroup: its id starts with -100)")
	case !tgInt(s.ChatID, false):
		v.errf(sk+".chat_id", "%q is not a Telegram chat id (an integer; a supergroup's starts with -100)", s.ChatID)
	case strings.HasPrefix(s.ChatID, "-") && !strings.HasPrefix(s.ChatID, "-100"):
		v.warnf(sk+".chat_id", "%s is a basic group, which has no topics: turn Topics on in the group's settings (it becomes a supergroup, with a new id starting with -100) and use that id", s.ChatID)
	}
	if prev, dup := chats[s.ChatID]; dup && s.ChatID != "" {
		v.errf(sk+".chat_id", "%s is already used by %s; a chat belongs to one server", s.ChatID, prev)
	} else if s.ChatID != "" {
		chats[s.ChatID] = sk + ".chat_id"
	}
	if len(s.OwnerIDs) == 0 {
		v.errf(sk+".owner_ids", "empty; list the Telegram user ids allowed to drive sessions")
	}
	for j, o := range s.OwnerIDs {
		if !tgInt(o, true) {
			v.errf(fmt.Sprintf("%s.owner_ids[%d]", sk, j), "%q is not a Telegram user id (a positive integer such as \"123456789\")", o)
		}
	}
}

// telegramTopic checks the topic_id of a Telegram project or thread
// (what), whose keys are under prefix and whose Discord-named channel key
// (channel_id, thread_id) holds channelID. topics maps each topic id of
// the server to the key of its first use.
func (v *checker) telegramTopic(prefix, what, channelKey string, s Server, topicID, channelID string, topics map[string]string) {
	if channelID != topicChannel(s.ChatID, topicID) {
		v.errf(prefix+"."+channelKey, "%s is a Discord key; a Telegram %s has topic_id", channelKey, what)
	}
	key := prefix + ".topic_id"
	switch {
	case topicID == "":
		v.errf(key, "missing; set it to the message_thread_id of the %s's forum topic", what)
		return
	case !tgInt(topicID, true):
		v.errf(key, "%q is not a topic id (a positive integer: the message_thread_id of a forum topic)", topicID)
		return
	case topicID == generalTopic:
		v.errf(key, "1 is the General topic, the server's control panel; give the %s a topic of its own", what)
		return
	}
	if prev, dup := topics[topicID]; dup {
		v.errf(key, "%s is already used by %s; a topic belongs to one project or thread", topicID, prev)
		return
	}
	topics[topicID] = key
}

// discordTopic reports a Telegram topic_id given to a Discord project or
// thread (what), which has channelKey instead.
func (v *checker) discordTopic(prefix, what, channelKey, topicID string) {
	if topicID != "" {
		v.errf(prefix+".topic_id", "topic_id is a Telegram key; a Discord %s has %s", what, channelKey)
	}
}
