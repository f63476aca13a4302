package gateway

import (
	"fmt"

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
	data := &discordgo.InteractionResponseData{Content: reply.Content, Components: discord.Components(reply.Rows), AllowedMentions: discord.NoMentions}
	if reply.Ephemeral {
		data.Flags = discordgo.MessageFlagsEphemeral
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

// Edit implements chat.Responder.
func (r *responder) Edit(reply chat.Reply) error {
	comps := discord.Components(reply.Rows)
	content := reply.Content
	if _, err := r.s.InteractionResponseEdit(r.i, &discordgo.WebhookEdit{Content: &content, Components: &comps, AllowedMentions: discord.NoMentions}); err != nil {
		return fmt.Errorf("edit interaction response: %w", err)
	}
	return nil
}

// Update implements chat.Responder.
func (r *responder) Update(msg chat.Message) error {
	return r.respond(discordgo.InteractionResponseUpdateMessage, &discordgo.InteractionResponseData{Content: msg.Content,
		Components: discord.Components(msg.Rows), AllowedMentions: discord.NoMentions})
}

// OpenModal implements chat.Responder.
func (r *responder) OpenModal(m chat.Modal) error {
	return r.respond(discordgo.InteractionResponseModal, discord.ModalData(m))
}
