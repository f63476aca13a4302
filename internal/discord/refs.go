package discord

import "github.com/ccbridge/ccbridge/internal/chat"

// Refs renders the core's message references (chat.MessageRef) in text as
// jump links into the server guildID; without one, as their words.
func Refs(guildID, text string) string {
	if guildID == "" {
		return chat.RenderRefs(text, chat.PlainRef)
	}
	return chat.RenderRefs(text, func(r chat.MessageRef) string {
		return "[" + r.Label + "](https://discord.com/channels/" + guildID + "/" + r.ChannelID + "/" + r.MessageID + ")"
	})
}
