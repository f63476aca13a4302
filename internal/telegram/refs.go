package telegram

import (
	"strconv"
	"strings"

	"github.com/ccbridge/ccbridge/internal/chat"
)

// messageLink renders a core message reference (chat.MessageRef) as a
// Markdown link that opens the message in the Telegram app
// (t.me/c/<id>/<topic>/<message>), or as its label where the chat is no
// supergroup, which t.me/c cannot open, or the message is another chat's.
func messageLink(r chat.MessageRef) string {
	p, err := ParseChannel(r.ChannelID)
	if err != nil {
		return r.Label
	}
	msg, err := p.message(r.MessageID)
	if err != nil {
		return r.Label
	}
	internal, ok := strings.CutPrefix(strconv.FormatInt(p.Chat, 10), "-100")
	if !ok {
		return r.Label
	}
	url := "https://t.me/c/" + internal + "/"
	if p.Topic != 0 {
		url += strconv.FormatInt(p.Topic, 10) + "/"
	}
	return "[" + r.Label + "](" + url + strconv.FormatInt(msg, 10) + ")"
}
