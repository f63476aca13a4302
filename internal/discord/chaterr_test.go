package discord

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
)

// Callers that know only chat.Poster (the relay, the hooks through it)
// tell Discord's failures apart by the chat sentinels; discord's own
// predicates keep working for the daemon's code.
func TestErrorsMatchTheChatSentinels(t *testing.T) {
	ctx := context.Background()
	down, downBot, downP := newPoster(t)
	down.Fail("POST", "/channels/*/messages", 503, 1000)
	sctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	_, err := downP.Post(sctx, downBot.ChannelID, chat.Message{Content: "x"})
	cancel()
	if !errors.Is(err, chat.ErrTransient) || !errors.Is(err, ErrTransient) || chat.RetryAfter(err) <= 0 || chat.RetryAfter(err) != RetryAfter(err) {
		t.Errorf("5xx: err = %v (retry after %v), want chat.ErrTransient with a wait", err, chat.RetryAfter(err))
	}

	srv, bot, p := newPoster(t)
	srv.DenyBotInChannel(bot, bot.ChannelID, fakediscord.PermAttachFiles)
	_, err = p.Post(ctx, bot.ChannelID, chat.Message{Content: "x", Files: []chat.File{{Name: "a.txt", Data: []byte("A")}}})
	if !errors.Is(err, chat.ErrMissingPermission) || !IsMissingPermission(err) || errors.Is(err, chat.ErrAuth) || errors.Is(err, chat.ErrTransient) {
		t.Errorf("50013: err = %v, want chat.ErrMissingPermission only", err)
	}

	err = p.Edit(ctx, bot.ChannelID, "123456789012345678", chat.Message{Content: "y"})
	if !errors.Is(err, chat.ErrUnknownMessage) || !IsUnknownMessage(err) || errors.Is(err, chat.ErrTransient) {
		t.Errorf("10008: err = %v, want chat.ErrUnknownMessage", err)
	}

	bad, err := NewPoster(srv.URL, "not-the-token")
	if err != nil {
		t.Fatal(err)
	}
	_, err = bad.Post(ctx, bot.ChannelID, chat.Message{Content: "x"})
	if !errors.Is(err, chat.ErrAuth) || !IsAuth(err) || errors.Is(err, chat.ErrMissingPermission) {
		t.Errorf("401: err = %v, want chat.ErrAuth", err)
	}
	if _, err := p.Post(ctx, bot.ChannelID, chat.Message{Content: "fine"}); err != nil {
		t.Fatal(err)
	}
}
