package telegram

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/ccbridge/ccbridge/internal/chat"
)

// commandName is what Telegram takes as a command: lower-case letters,
// digits and underscores, 1 to 32 of them.
var commandName = regexp.MustCompile(`^[a-z0-9_]{1,32}$`)

// CommandName is the Telegram name of a command of the core: lower case,
// '-' as '_'; false when Telegram cannot take it.
func CommandName(name string) (string, bool) {
	n := strings.ReplaceAll(strings.ToLower(name), "-", "_")
	return n, commandName.MatchString(n)
}

// maxCommandDescription is Telegram's limit on a command's description.
const maxCommandDescription = 256

// botCommand is a BotCommand.
type botCommand struct {
	Command     string `json:"command"`
	Description string `json:"description"`
}

// botCommands renders the core's commands for setMyCommands: the
// description, with the options' names to type after the command.
func botCommands(specs []chat.CommandSpec) (cmds []botCommand, skipped []string) {
	for _, s := range specs {
		name, ok := CommandName(s.Name)
		if !ok {
			skipped = append(skipped, s.Name)
			continue
		}
		desc := s.Description
		var args []string
		for _, o := range s.Options {
			if o.Required {
				args = append(args, "<"+o.Name+">")
			} else {
				args = append(args, "["+o.Name+"]")
			}
		}
		if len(args) > 0 {
			desc += " — " + strings.Join(args, " ")
		}
		if r := []rune(desc); len(r) > maxCommandDescription {
			desc = string(r[:maxCommandDescription-1]) + "…"
		}
		if strings.TrimSpace(desc) == "" {
			desc = name
		}
		cmds = append(cmds, botCommand{Command: name, Description: desc})
		if len(cmds) == 100 { // Telegram's most
			break
		}
	}
	return cmds, skipped
}

// SetCommands makes specs the bot's commands in its chat (scope chat):
// members see them in the client's command menu.
func (p *Poster) SetCommands(ctx context.Context, chatID int64, specs []chat.CommandSpec) (skipped []string, err error) {
	cmds, skipped := botCommands(specs)
	params := map[string]any{"commands": cmds, "scope": map[string]any{"type": "chat", "chat_id": chatID}}
	if err := p.c.call(ctx, "setMyCommands", params, nil, true); err != nil {
		return skipped, fmt.Errorf("set the bot's commands: %w", err)
	}
	return skipped, nil
}

// commandOptions reads a command's options from the text typed after it:
// the first option takes it all, but for a text of several lines when the
// command has a second option, which takes the lines after the first. A
// choice may be typed by its value or its label.
func commandOptions(spec chat.CommandSpec, rest string) map[string]string {
	out := map[string]string{}
	rest = strings.TrimSpace(rest)
	if rest == "" || len(spec.Options) == 0 {
		return out
	}
	values := []string{rest}
	if first, more, ok := strings.Cut(rest, "\n"); ok && len(spec.Options) > 1 {
		values = []string{strings.TrimSpace(first), strings.TrimSpace(more)}
	}
	for i, v := range values {
		o := spec.Options[i]
		if v == "" {
			continue
		}
		for _, c := range o.Choices {
			if strings.EqualFold(v, c.Value) || strings.EqualFold(v, c.Name) {
				v = c.Value
				break
			}
		}
		out[o.Name] = v
	}
	return out
}
