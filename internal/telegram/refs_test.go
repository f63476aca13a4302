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
	ref := func(ch, msg string) string {
		return chat.MessageRef{ChannelID: ch, MessageID: msg, Label: "this message"}.String()
	}
	cases := map[string]string{
		ref("-1001234567890.42", MessageID(-1001234567890, 77)): `<a href="https://t.me/c/1234567890/42/77">this message</a>`,
		ref("-1001234567890", MessageID(-1001234567890, 77)):    `<a href="https://t.me/c/1234567890/77">this message</a>`,
		ref("-1001234567890.42", "77"):                          `<a href="https://t.me/c/1234567890/42/77">this message</a>`,
		ref("-1001234567890.42", MessageID(-1009999999999, 77)): "this message", // another chat's
		ref("-4242", MessageID(-4242, 77)):                      "this message",
		ref("12345", "77"):                                      "this message",
	}
	for in, want := range cases {
		got := strings.Join(render("⚠️ "+in+" was sent"), "")
		if got != "⚠️ "+want+" was sent" {
			t.Errorf("render(%q) = %q, want the link %q", in, got, want)
		}
	}
}
