package discord

import (
	"context"
	"fmt"

	"github.com/ccbridge/ccbridge/internal/chat"
)

// PostCard is Post for a prompt's card: it returns, with the message's id,
// the ids Discord gave its attachments, which a click on the card is later
// checked against (a card edited to show other files is not the card).
func (p *Poster) PostCard(ctx context.Context, channelID string, m chat.Message) (id string, fileIDs []string, err error) {
	nonce := randomNonce()
	err = p.retry(ctx, func() error {
		sent, err := p.create(ctx, channelID, nonce, m)
		if err == nil {
			id, fileIDs = sent.ID, nil
			for _, a := range sent.Attachments {
				fileIDs = append(fileIDs, a.ID)
			}
		}
		return err
	})
	if err != nil {
		return "", nil, fmt.Errorf("post to %s: %w", channelID, err)
	}
	return id, fileIDs, nil
}
