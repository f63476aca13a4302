package discord

import (
	"regexp"

	"github.com/ccbridge/ccbridge/internal/chat"
)

// Refs renders the core's message references (chat.MessageRef) in text as
// jump links into the server guildID; without one, as their words.
func Refs(guildID, text string) string {
	if guildID == "" {
		return chat.RenderRefs(text, chat.PlainRef)
	}
	return chat.RenderRefs(text, func(r chat.MessageRef) string { return jumpLink(guildID, r) })
}

func jumpLink(guildID string, r chat.MessageRef) string {
	return "[" + r.Label + "](https://discord.com/channels/" + guildID + "/" + r.ChannelID + "/" + r.MessageID + ")"
}

var jumpLinks = regexp.MustCompile(`\[([^\]\n]*)\]\(https://discord\.com/channels/(\d+)/(\d+)/(\d+)\)`)

// Unrefs is Refs undone: a clicked message's content as the core drew it,
// whose face its controls are bound to. Only a link Refs would make of a
// reference is turned back; a jump link the core drew literally in the
// same form would come back as a reference too, and a click on its
// message be refused as changed (ccbridge's own texts draw none).
func Unrefs(guildID, text string) string {
	if guildID == "" {
		return text
	}
	return jumpLinks.ReplaceAllStringFunc(text, func(link string) string {
		m := jumpLinks.FindStringSubmatch(link)
		if m[2] != guildID {
			return link
		}
		ref := chat.MessageRef{ChannelID: m[3], MessageID: m[4], Label: m[1]}
		if Refs(guildID, ref.String()) != link {
			return link // a label a reference cannot carry
		}
		return ref.String()
	})
}
