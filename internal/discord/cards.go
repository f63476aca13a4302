package discord

import (
	"context"
	"errors"
	"fmt"

	"github.com/bwmarrin/discordgo"

	"github.com/ccbridge/ccbridge/internal/chat"
)

// EditCard edits a prompt card to show how it was closed. Discord refuses
// every edit in an archived thread (50083), and a post there would
// unarchive it, so for such a card the outcome goes to the thread's parent
// channel instead, naming the thread, and the thread stays archived. The
// parent post carries a nonce derived from the card and its outcome, so a
// hook and the daemon closing the same card post it once.
func (p *Poster) EditCard(ctx context.Context, channelID, messageID string, m chat.Message, outcome string) error {
	err := p.Edit(ctx, channelID, messageID, m)
	if err == nil || !IsArchivedThread(err) {
		return err
	}
	var ch *discordgo.Channel
	if ferr := p.retry(ctx, func() error {
		var err error
		ch, err = p.dg.Channel(channelID, discordgo.WithContext(ctx))
		return err
	}); ferr != nil || ch.ParentID == "" {
		return errors.Join(err, ferr)
	}
	if r := []rune(outcome); len(r) > outcomeRoom {
		outcome = string(r[:outcomeRoom-1]) + "…"
	}
	text := fmt.Sprintf("🗄️ A prompt in <#%s> was closed after the thread was archived: %s", channelID, outcome)
	if _, perr := p.PostOnce(ctx, ch.ParentID, Nonce("card-outcome|"+messageID+"|"+outcome), chat.Message{Content: text}); perr != nil {
		return fmt.Errorf("card %s in archived thread %s: %w", messageID, channelID, perr)
	}
	return nil
}

// outcomeRoom is what the parent post leaves for the outcome within
// Discord's 2,000 characters.
const outcomeRoom = chat.Limit - 200

// IsArchivedThread reports whether err says the channel is an archived
// thread, where Discord allows no edits or reactions.
func IsArchivedThread(err error) bool {
	var rest *discordgo.RESTError
	return errors.As(err, &rest) && rest.Message != nil && rest.Message.Code == discordgo.ErrCodePerformedOperationOnArchivedThread
}
