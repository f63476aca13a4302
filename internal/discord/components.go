package discord

import (
	"github.com/bwmarrin/discordgo"

	"github.com/ccbridge/ccbridge/internal/chat"
)

// Components converts chat rows to discordgo components (a button with a
// URL is a link button, style 5, without a custom_id). The result is
// never nil: an empty list removes the components of an edited message,
// while nil would leave them.
func Components(rows []chat.Row) []discordgo.MessageComponent {
	out := []discordgo.MessageComponent{}
	for _, row := range rows {
		if row.Select != nil {
			sel := row.Select
			menu := discordgo.SelectMenu{MenuType: discordgo.StringSelectMenu, CustomID: sel.CustomID, Placeholder: sel.Placeholder, MaxValues: sel.MaxValues}
			if sel.MinValues > 0 {
				minValues := sel.MinValues
				menu.MinValues = &minValues
			}
			for _, o := range sel.Options {
				menu.Options = append(menu.Options, discordgo.SelectMenuOption{Label: o.Label, Value: o.Value, Description: o.Description, Default: o.Default})
			}
			out = append(out, discordgo.ActionsRow{Components: []discordgo.MessageComponent{menu}})
			continue
		}
		var buttons []discordgo.MessageComponent
		for _, b := range row.Buttons {
			if b.Link() {
				buttons = append(buttons, discordgo.Button{Label: b.Label, URL: b.URL, Style: discordgo.LinkButton, Disabled: b.Disabled})
				continue
			}
			buttons = append(buttons, discordgo.Button{Label: b.Label, CustomID: b.CustomID, Style: discordgo.ButtonStyle(b.Style), Disabled: b.Disabled})
		}
		if len(buttons) > 0 {
			out = append(out, discordgo.ActionsRow{Components: buttons})
		}
	}
	return out
}

// ModalData converts a chat modal to an interaction response's data.
func ModalData(m chat.Modal) *discordgo.InteractionResponseData {
	var rows []discordgo.MessageComponent
	for _, in := range m.Inputs {
		style := discordgo.TextInputShort
		if in.Paragraph {
			style = discordgo.TextInputParagraph
		}
		rows = append(rows, discordgo.ActionsRow{Components: []discordgo.MessageComponent{discordgo.TextInput{
			CustomID: in.CustomID, Label: in.Label, Style: style, Value: in.Value, Required: in.Required, MaxLength: in.MaxLength}}})
	}
	return &discordgo.InteractionResponseData{CustomID: m.CustomID, Title: m.Title, Components: rows}
}

// NoMentions keeps relayed text from pinging anyone: Claude's output may
// quote @everyone or a user id.
var NoMentions = &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{}}

func files(fs []chat.File) []*discordgo.File {
	var out []*discordgo.File
	for _, f := range fs {
		out = append(out, &discordgo.File{Name: f.Name, ContentType: "application/octet-stream", Reader: bytesReader(f.Data)})
	}
	return out
}

// Flags are the message flags ccbridge sends with m: a message carrying
// components is sent with SUPPRESS_EMBEDS, so Discord never adds a link
// preview to it. Its face is bound to what ccbridge drew (internal/guard),
// and a preview would change it: a card citing a link could never be
// approved (security review 3, finding 9). Any embed on such a message can
// then only come from an edit by someone else holding the token.
func Flags(rows []chat.Row) discordgo.MessageFlags {
	if len(rows) > 0 {
		return discordgo.MessageFlagsSuppressEmbeds
	}
	return 0
}

// Files converts chat files to discordgo files.
func Files(fs []chat.File) []*discordgo.File { return files(fs) }
