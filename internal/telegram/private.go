package telegram

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/state"
)

// Answers for one person. A Telegram group has no message only one of its
// members sees, and every member reads every topic. So an answer the core
// marks Ephemeral (a refusal, "no longer valid", /web's capability link, a
// status meant for the asker) never goes to the group:
//
//   - a click's short answer is its callback query's answer, which only
//     the clicker sees (a toast; an alert when it is long);
//   - anything else goes to the person's private chat with the bot, whose
//     id is the person's id;
//   - a person who never started the bot (or blocked it) cannot be written
//     to: the group is told only how to fix that (noPrivateChat), in the
//     click's alert when it can be, never what the answer held.

const (
	noPrivateChat = "I can't message you privately: open a chat with me and press Start, then try again."
	sentPrivately = "Answered you in our private chat."
	// welcome answers an owner's /start in the private chat.
	welcome = "✅ I can now answer you here: what is meant for you alone (a /web link, an answer to your command) comes to this chat. " +
		"Talk to Claude in the group's topics."
	// notHere answers anything else an owner writes in the private chat.
	notHere = "This chat only carries what is meant for you alone: talk to Claude in the group's topics."
	// alertFrom is the length from which a click's answer is an alert the
	// person dismisses rather than a toast that fades.
	alertFrom = 80
)

// whisper answers reply to the person who acted, and to nobody else. It
// returns the private message posted and its place ("" for a click's
// answer); an error when the person could not be reached.
func (r *responder) whisper(reply chat.Reply) (string, Place, error) {
	ctx, cancel := r.ctx()
	defer cancel()
	n := units(reply.Content)
	if len(reply.Rows) == 0 && len(reply.Files) == 0 && n <= maxToast && r.answerWith(ctx, reply.Content, n > alertFrom) {
		return "", Place{}, nil
	}
	uid, err := strconv.ParseInt(r.user.ID, 10, 64)
	if err != nil || uid <= 0 {
		r.answer(ctx, "")
		return "", Place{}, fmt.Errorf("answer privately: no person to answer (%q)", r.user.ID)
	}
	dm := Place{Chat: uid}
	asked := r.asked
	if asked == "" {
		asked = r.place.ChannelID()
	}
	id, err := r.b.p.postPrivate(ctx, dm.ChannelID(), asked, reply)
	if err == nil {
		r.answerWith(ctx, sentPrivately, false)
		return id, dm, nil
	}
	if !unreachable(err) {
		r.answer(ctx, "")
		return "", Place{}, fmt.Errorf("answer privately: %w", err)
	}
	r.b.log.Info("could not answer a person privately: they have not started the bot", "user", r.user.ID, "err", err)
	if !r.answerWith(ctx, noPrivateChat, true) {
		if _, perr := r.post(chat.Message{Content: noPrivateChat}); perr != nil {
			r.b.log.Warn("could not say how to open the private chat", "err", perr)
		}
	}
	return "", Place{}, fmt.Errorf("answer privately: %w", err)
}

// privateOf is an answer as the private chat shows it, its controls
// aside: its link buttons (the web view's capability) as links in the
// text, which Telegram opens whatever their host. Only postPrivate draws
// its other controls, recording where they act; a redraw has none.
func privateOf(reply chat.Reply) chat.Message {
	m := chat.Message{Content: reply.Content, Files: reply.Files}
	for _, row := range reply.Rows {
		for _, b := range row.Buttons {
			if b.Link() && !b.Disabled {
				m.Content += "\n🔗 [" + b.Label + "](<" + b.URL + ">)"
			}
		}
	}
	return m
}

// unreachable reports Telegram's refusal to let the bot write to a person:
// they never started it, blocked it, or are gone.
func unreachable(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && (ae.Code == http.StatusForbidden || strings.Contains(strings.ToLower(ae.Description), "chat not found"))
}

// onPrivate answers an owner in their private chat with the bot: /start
// (which opens the chat for whisper) with what the chat is for, anything
// else with where to talk to Claude. Nothing said there reaches the core,
// and a stranger is answered nothing.
func (b *Bot) onPrivate(ctx context.Context, m *inMessage) {
	if m.From == nil || m.Chat.ID != m.From.ID || b.stranger(*m.From) || !m.written() {
		return
	}
	text := notHere
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), answerTimeout)
	defer cancel()
	if name, _, ok, _ := m.command(b.name); ok && name == "start" {
		text = welcome
		if b.owner(*m.From) {
			b.privateMenu(ctx, m.From.ID) // its chat opens now
		}
	}
	if _, err := b.p.Post(ctx, ChannelID(m.Chat.ID, 0), chat.Message{Content: text}); err != nil {
		b.log.Warn("could not answer in a private chat", "err", err)
	}
}

// postPrivate posts an answer to one person's private chat (channelID).
// Its controls stay, drawn as asked in askedIn: their click acts in that
// channel, once (onCallback). The drawing records the answer as the core
// gave it (what the core's guard bound); its text also carries its links
// (privateOf).
func (p *Poster) postPrivate(ctx context.Context, channelID, askedIn string, reply chat.Reply) (string, error) {
	shown := privateOf(reply)
	if keyboardOf("", reply.Rows, nil) == nil {
		return p.Post(ctx, channelID, shown)
	}
	chunks := render(shown.Content)
	if len(chunks) == 0 {
		chunks = []string{"…"} // a keyboard needs a text to hang from
	}
	id, _, err := p.sendAsked(ctx, channelID, askedIn, chunks, chat.Message{Content: reply.Content, Rows: reply.Rows, Files: reply.Files})
	if err != nil {
		return "", fmt.Errorf("post to %s: %w", channelID, err)
	}
	return id, nil
}

// errUsed refuses a second click on a private answer's controls.
var errUsed = errors.New("a private answer's controls were used")

// use marks a private answer's drawing clicked, under the record's lock:
// false when it was clicked already, or is no longer the drawing face.
func (p *Poster) use(ctx context.Context, chatID int64, messageID, face string) bool {
	key := state.TelegramDrawnKey(p.server, strconv.FormatInt(chatID, 10), messageID)
	_, err := p.store.Drawn.Update(context.WithoutCancel(ctx), key, func(d *state.TelegramDrawn) error {
		if d.Used || d.Face != face || d.AskedIn == "" || d.Server != p.server {
			return errUsed
		}
		d.Used = true
		return nil
	})
	return err == nil
}

// owner reports whether u is an owner: by IsOwner (the config in use),
// else by OwnerIDs.
func (b *Bot) owner(u user) bool {
	id := strconv.FormatInt(u.ID, 10)
	if u.IsBot {
		return false
	}
	if b.o.IsOwner != nil {
		return b.o.IsOwner(id)
	}
	return slices.Contains(b.o.OwnerIDs, id)
}

// privateMenu sets the command menu in an owner's private chat, where the
// commands of their private topics are typed. A chat not started yet gets
// it on /start.
func (b *Bot) privateMenu(ctx context.Context, uid int64) {
	if len(b.o.Commands) == 0 {
		return
	}
	_, err := b.p.SetCommands(ctx, uid, b.o.Commands)
	switch {
	case unreachable(err):
		b.log.Info("an owner's private chat gets the command menu once they start the bot", "user", uid)
	case err != nil:
		b.log.Warn("could not set the command menu of an owner's private chat", "user", uid, "err", err)
	}
}
