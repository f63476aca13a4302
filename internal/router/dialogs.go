package router

import (
	"errors"
	"strconv"
	"time"

	"github.com/ccbridge/ccbridge/internal/approval"
	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/redact"
	"github.com/ccbridge/ccbridge/internal/session"
)

// A dialog Claude shows (at start, or just after) that no hook reports (folder trust, the
// auto-mode nudge, any a later release adds) is posted in the session's
// channel by itself, with its choices as buttons (a select when there are
// more than five). ccbridge never answers it: trust and settings are the
// person's. Each choice is bound like a /screen key: to its session's
// channel, to the dialog it was drawn over (session.Dialog.Hash) and to a
// time, after which it is refused.

// dialogKind is the custom_id kind of a dialog's choices.
const dialogKind = "dlg"

// dialogTTL is how long a posted dialog's choices may be used. The dialog
// hash already keeps a choice from reaching any other dialog; the limit
// keeps a forgotten message from answering one much later.
const dialogTTL = 15 * time.Minute

// dialogButtons is how many choices get buttons; more go in a select.
const dialogButtons = 5

// onDialog returns what a starting session of tg calls when Claude stops
// at a dialog: the dialog is posted in tg's channel.
func (r *Router) onDialog(tg target) func(session.Dialog) {
	channel := tg.rt.project.ChannelID
	if tg.threadID != "" {
		channel = tg.threadID
	}
	server := tg.rt.server.Name
	agent := r.agentOf(tg)
	return func(d session.Dialog) {
		m := dialogMessage(r.opt.Instance, tg.key, agent, d, r.now())
		if _, err := r.opt.Replier.Post(r.ctx, server, channel, m); err != nil {
			r.opt.Log.Error("could not post a dialog of Claude's", "session", tg.key, "err", err)
		}
	}
}

// dialogHead introduces a dialog of agent (its name for people).
func dialogHead(agent string) string {
	return "❓ " + agent + " is asking this in its terminal (no card comes for it). Only you can answer it; your message goes in once it is answered."
}

// dialogMessage draws a dialog as cards draw what they quote: masked
// (screen text: a secret Claude wrapped over lines too) before it is cut,
// with its head and tail. Room is left for the note an answer appends
// (see dialogAnswer).
func dialogMessage(instance, key, agent string, d session.Dialog, drawn time.Time) chat.Message {
	head := dialogHead(agent)
	room := chat.Limit - len([]rune(head)) - 1 - 200
	m := chat.Message{Content: head + "\n" + approval.CodeBlock(redact.Screen(d.Text), room)}
	at := strconv.FormatInt(drawn.Unix(), 36)
	id := func(choice string) string {
		s, err := chat.ID{Instance: instance, Kind: dialogKind, Args: []string{key, d.Hash, at, choice}}.Encode()
		if err != nil {
			return ""
		}
		return s
	}
	label := func(c string, n int) string {
		if r := []rune(c); len(r) > n {
			return string(r[:n-1]) + "…"
		}
		return c
	}
	if len(d.Choices) > dialogButtons {
		sel := &chat.Select{CustomID: id(""), Placeholder: "Choose", MinValues: 1, MaxValues: 1}
		for i, c := range d.Choices[:min(len(d.Choices), 25)] {
			sel.Options = append(sel.Options, chat.Option{Label: label(c, 100), Value: strconv.Itoa(i), Description: "choice " + strconv.Itoa(i+1)})
		}
		m.Rows = []chat.Row{{Select: sel}}
		return m
	}
	var row chat.Row
	for i, c := range d.Choices {
		style := chat.Secondary
		if i == d.Selected {
			style = chat.Primary // what Enter would pick in the terminal
		}
		row.Buttons = append(row.Buttons, chat.Button{Label: label(c, 80), CustomID: id(strconv.Itoa(i)), Style: style})
	}
	m.Rows = []chat.Row{row}
	return m
}

// dialogAnswer presses a posted dialog's choice: only in the session of the
// channel it was posted in, within dialogTTL, and only while that same
// dialog is open (session.AnswerDialog checks it as it presses).
func (r *Router) dialogAnswer(ev chat.ComponentEvent, args []string, resp chat.Responder) {
	if len(args) != 4 {
		_ = resp.Respond(chat.Reply{Content: "This button is no longer valid; nothing was pressed.", Ephemeral: true})
		return
	}
	key, ok := r.channelKey(ev.Server, ev.ChannelID, args[0])
	if !ok {
		r.opt.Log.Warn("a dialog's choice was used outside its session's channel", "channel", ev.ChannelID, "user", ev.User.ID)
		_ = resp.Respond(chat.Reply{Content: "This choice belongs to another session; nothing was pressed.", Ephemeral: true})
		return
	}
	pick := args[3]
	if pick == "" && len(ev.Values) == 1 {
		pick = ev.Values[0]
	}
	choice, err := strconv.Atoi(pick)
	drawn, derr := strconv.ParseInt(args[2], 36, 64)
	if age := r.now().Sub(time.Unix(drawn, 0)); err != nil || derr != nil || age > dialogTTL || age < -dialogTTL {
		_ = resp.Respond(chat.Reply{Content: "This dialog was posted too long ago to be answered from here; nothing was pressed. Use /screen.", Ephemeral: true})
		return
	}
	if err := resp.DeferUpdate(); err != nil {
		return
	}
	// The message keeps the dialog and says what became of it; its
	// choices are gone for everyone.
	done := func(note string) { _, _ = resp.Edit(chat.Reply{Content: ev.Content + "\n" + note}) }
	switch err := r.opt.Sessions.AnswerDialog(r.ctx, key, args[1], choice); {
	case errors.Is(err, session.ErrDialogChanged):
		done("⚠️ This dialog is no longer on Claude's screen; nothing was pressed. Use /screen to see what is.")
	case err != nil:
		done("⚠️ " + chat.ErrText(err))
	default:
		r.opt.Log.Info("a dialog was answered in chat", "session", key, "user", ev.User.ID)
		done(answeredNote(ev, pick))
	}
}

// answeredNote is what a posted dialog says once answered: who pressed
// which choice (its label, from the message's own components).
func answeredNote(ev chat.ComponentEvent, pick string) string {
	label := ""
	for _, row := range ev.Rows {
		for _, b := range row.Buttons {
			if b.CustomID == ev.CustomID {
				label = b.Label
			}
		}
		if row.Select != nil {
			for _, o := range row.Select.Options {
				if o.Value == pick {
					label = o.Label
				}
			}
		}
	}
	if label == "" {
		return "✅ Answered by " + chat.Mention(ev.User) + "."
	}
	return "✅ Answered by " + chat.Mention(ev.User) + ": “" + label + "”."
}
