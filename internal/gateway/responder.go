package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/bwmarrin/discordgo"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/discord"
)

// responder answers one interaction through discordgo.
type responder struct {
	s *discordgo.Session
	i *discordgo.Interaction
}

func (r *responder) respond(t discordgo.InteractionResponseType, data *discordgo.InteractionResponseData) error {
	if err := r.s.InteractionRespond(r.i, &discordgo.InteractionResponse{Type: t, Data: data}); err != nil {
		return fmt.Errorf("answer interaction: %w", err)
	}
	return nil
}

// Respond implements chat.Responder.
func (r *responder) Respond(reply chat.Reply) error {
	data := &discordgo.InteractionResponseData{Content: discord.Refs(r.i.GuildID, reply.Content), Components: discord.Components(reply.Rows), AllowedMentions: discord.NoMentions,
		Flags: discord.Flags(reply.Rows)}
	if reply.Ephemeral {
		data.Flags |= discordgo.MessageFlagsEphemeral
	}
	return r.respond(discordgo.InteractionResponseChannelMessageWithSource, data)
}

// Defer implements chat.Responder.
func (r *responder) Defer(ephemeral bool) error {
	data := &discordgo.InteractionResponseData{}
	if ephemeral {
		data.Flags = discordgo.MessageFlagsEphemeral
	}
	return r.respond(discordgo.InteractionResponseDeferredChannelMessageWithSource, data)
}

// DeferUpdate implements chat.Responder.
func (r *responder) DeferUpdate() error {
	return r.respond(discordgo.InteractionResponseDeferredMessageUpdate, nil)
}

// editBody is an edit of the interaction's original message: discordgo
// 0.29's WebhookEdit has no flags, which SUPPRESS_EMBEDS needs.
type editBody struct {
	Content         *string                           `json:"content"`
	Components      *[]discordgo.MessageComponent     `json:"components"`
	AllowedMentions *discordgo.MessageAllowedMentions `json:"allowed_mentions,omitempty"`
	Flags           discordgo.MessageFlags            `json:"flags,omitempty"`
	// Attachments lists the attachments to keep: none, when files
	// replace them.
	Attachments *[]*discordgo.MessageAttachment `json:"attachments,omitempty"`
}

// Edit implements chat.Responder: it returns the id of the message edited
// (the original response, or the clicked message after DeferUpdate).
func (r *responder) Edit(reply chat.Reply) (string, error) {
	comps := discord.Components(reply.Rows)
	content := discord.Refs(r.i.GuildID, reply.Content)
	body := editBody{Content: &content, Components: &comps, AllowedMentions: discord.NoMentions, Flags: discord.Flags(reply.Rows)}
	uri := discordgo.EndpointWebhookMessage(r.i.AppID, r.i.Token, "@original")
	var resp []byte
	var err error
	if len(reply.Files) > 0 || reply.DropFiles {
		body.Attachments = uploads(reply.Files)
	}
	if len(reply.Files) > 0 {
		ct, b, encErr := discordgo.MultipartBodyWithJSON(body, discord.Files(reply.Files))
		if encErr != nil {
			return "", fmt.Errorf("edit interaction response: encode: %w", encErr)
		}
		resp, err = r.s.RequestRaw(http.MethodPatch, uri, ct, b, uri, 0)
	} else {
		resp, err = r.s.RequestWithBucketID(http.MethodPatch, uri, body, discordgo.EndpointWebhookToken("", ""))
	}
	if err != nil {
		return "", fmt.Errorf("edit interaction response: %w", err)
	}
	var m discordgo.Message
	if err := json.Unmarshal(resp, &m); err != nil {
		return "", fmt.Errorf("edit interaction response: decode: %w", err)
	}
	return m.ID, nil
}

// Update implements chat.Responder: it returns the id of the clicked
// message, which it replaced. Files (or DropFiles) replace the message's
// attachments: an update without them keeps the old ones.
func (r *responder) Update(msg chat.Message) (string, error) {
	data := &discordgo.InteractionResponseData{Content: discord.Refs(r.i.GuildID, msg.Content), Components: discord.Components(msg.Rows), AllowedMentions: discord.NoMentions,
		Flags: discord.Flags(msg.Rows)}
	if len(msg.Files) > 0 || msg.DropFiles {
		data.Attachments, data.Files = uploads(msg.Files), discord.Files(msg.Files)
	}
	if err := r.respond(discordgo.InteractionResponseUpdateMessage, data); err != nil {
		return "", err
	}
	if r.i.Message == nil {
		return "", nil
	}
	return r.i.Message.ID, nil
}

// uploads is the attachments list of an edit whose files replace the
// message's: only the new uploads, by their index, so none of the old
// attachments is kept (an edit that lists no attachments keeps them all).
func uploads(fs []chat.File) *[]*discordgo.MessageAttachment {
	out := make([]*discordgo.MessageAttachment, len(fs))
	for i, f := range fs {
		out[i] = &discordgo.MessageAttachment{ID: strconv.Itoa(i), Filename: f.Name}
	}
	return &out
}

// OpenModal implements chat.Responder.
func (r *responder) OpenModal(m chat.Modal) error {
	return r.respond(discordgo.InteractionResponseModal, discord.ModalData(m))
}
