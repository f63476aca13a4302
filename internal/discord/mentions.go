package discord

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/bwmarrin/discordgo"
)

// SendMentioning posts a plain message that notifies exactly users (their
// ids, written as <@id> in content): allowed_mentions names them and
// parses nothing else, so no @everyone, role or other user in the text
// pings anyone. It is for attention pings only; everything relayed from
// Claude goes out with NoMentions. The nonce works as in PostOnce.
func (p *Poster) SendMentioning(ctx context.Context, channelID, nonce, content string, users []string) (string, error) {
	body := createBody{Content: content, Components: []discordgo.MessageComponent{}, Nonce: nonce, EnforceNonce: nonce != "",
		AllowedMentions: &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{}, Users: users}}
	endpoint := discordgo.EndpointChannelMessages(channelID)
	var id string
	err := p.retry(ctx, func() error {
		resp, err := p.dg.RequestWithBucketID(http.MethodPost, endpoint, body, endpoint, discordgo.WithContext(ctx))
		if err != nil {
			return err
		}
		var msg discordgo.Message
		if err := json.Unmarshal(resp, &msg); err != nil {
			return fmt.Errorf("decode created message: %w", err)
		}
		id = msg.ID
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("post to %s: %w", channelID, err)
	}
	return id, nil
}
