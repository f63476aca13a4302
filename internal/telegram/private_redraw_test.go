package telegram

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/testutil/faketelegram"
)

// A private answer acts once: drawing the same keyboard again (an edit
// that keeps its face) does not make it usable a second time; a new face
// is a new answer.
func TestRedrawnPrivateAnswerStaysUsed(t *testing.T) {
	tg := faketelegram.New(t)
	p := posterFor(t, tg, openStore(t, filepath.Join(t.TempDir(), "durable")))
	ctx := context.Background()
	const chatID, msg = int64(123456789), "41"
	m := chat.Message{Content: "Which folder?"}
	p.draw(ctx, ChannelID(chatID, 0), msg, "face1", "-1001", m)
	if !p.use(ctx, chatID, msg, "face1") {
		t.Fatal("a fresh private answer cannot be used")
	}
	p.draw(ctx, ChannelID(chatID, 0), msg, "face1", "", m)
	if p.use(ctx, chatID, msg, "face1") {
		t.Fatal("redrawn with the same face, the answer acted a second time")
	}
	p.draw(ctx, ChannelID(chatID, 0), msg, "face2", "", m)
	if !p.use(ctx, chatID, msg, "face2") {
		t.Error("a new face drawn there cannot be used")
	}
}
