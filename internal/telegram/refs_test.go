package telegram

import (
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/chat"
)

// The core's message references become links into the Telegram app (a
// topic's message, or the General topic's), or their words where the chat
// is no supergroup that t.me/c can open.
func TestMessageRefsLinkIntoTheApp(t *testing.T) {
	ref := func(ch string) string {
		return chat.MessageRef{ChannelID: ch, MessageID: "77", Label: "this message"}.String()
	}
	cases := map[string]string{
		ref("-1001234567890.42"): `<a href="https://t.me/c/1234567890/42/77">this message</a>`,
		ref("-1001234567890"):    `<a href="https://t.me/c/1234567890/77">this message</a>`,
		ref("-4242"):             "this message",
		ref("12345"):             "this message",
	}
	for in, want := range cases {
		got := strings.Join(render("⚠️ "+in+" was sent"), "")
		if got != "⚠️ "+want+" was sent" {
			t.Errorf("render(%q) = %q, want the link %q", in, got, want)
		}
	}
}
