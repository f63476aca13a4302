package gateway

import (
	"fmt"

	"github.com/bwmarrin/discordgo"

	"github.com/ccbridge/ccbridge/internal/chat"
)

// responder answers one interaction through discordgo.
type responder struct {
	s *discordgo.Session
	i *discordgo.Interaction
}

var noMentions = &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{}}

func components(rows [][]chat.Button) []discordgo.MessageComponent {
	// An empty (not nil) list removes the buttons of an edited message.
	out := []discordgo.MessageComponent{}
	for _, row := range rows {
		var buttons []discordgo.MessageComponent
		for _, b := range row {
			buttons = append(buttons, discordgo.Button{Label: b.Label, CustomID: b.CustomID, Style: discordgo.ButtonStyle(b.Style)})
		}
		if len(buttons) > 0 {
			out = append(out, discordgo.ActionsRow{Components: buttons})
		}
	}
	return out
}

func (r *responder) respond(t discordgo.InteractionResponseType, data *discordgo.InteractionResponseData) error {
	if err := r.s.InteractionRespond(r.i, &discordgo.InteractionResponse{Type: t, Data: data}); err != nil {
		return fmt.Errorf("answer interaction: %w", err)
	}
	return nil
}

// Respond implements chat.Responder.
func (r *responder) Respond(reply chat.Reply) error {
	data := &discordgo.InteractionResponseData{Content: reply.Content, Components: components(reply.Rows), AllowedMentions: noMentions}
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
	comps := components(reply.Rows)
	content := reply.Content
	if _, err := r.s.InteractionResponseEdit(r.i, &discordgo.WebhookEdit{Content: &content, Components: &comps, AllowedMentions: noMentions}); err != nil {
		return fmt.Errorf("edit interaction response: %w", err)
	}
	return nil
}
