package router

import (
	"context"
	"errors"
	"time"

	"github.com/ccbridge/ccbridge/internal/approval"
	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/guard"
	"github.com/ccbridge/ccbridge/internal/intake"
	"github.com/ccbridge/ccbridge/internal/land"
	"github.com/ccbridge/ccbridge/internal/panel"
	"github.com/ccbridge/ccbridge/internal/schedule"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/voice"
)

// Every control ccbridge draws (a button, a menu, a form) is answered
// through one table, and each entry names its guard (internal/guard):
// Bound controls act only from the message ccbridge recorded drawing them,
// still showing what it drew; Inert ones change nothing a person did not
// see and may come from anywhere. The check runs here, before any
// handler: anyone holding the bot token can edit ccbridge's messages or
// post copies of their controls (security review 3, finding 2).

// control names an entry: a custom_id kind and the action it carries.
type control struct{ kind, action string }

// component is how one control is answered: a click, or a form's submit.
type component struct {
	policy guard.Policy
	why    string // an Inert control's reason for needing no binding
	click  func(r *Router, ev chat.ComponentEvent, id chat.ID, resp chat.Responder)
	submit func(r *Router, ev chat.ModalEvent, id chat.ID, resp chat.Responder)
	// check replaces the guard's own bindings for controls whose message
	// keeps its binding elsewhere (a card's, in its request record).
	check func(r *Router, server, channelID string, id chat.ID, shown guard.Shown) error
	// refusal is what a refused click is told (default guard.Refusal),
	// and spent what a click on its message answered since is told
	// (default guard.SpentRefusal).
	refusal, spent string
}

type (
	clickFunc  = func(r *Router, ev chat.ComponentEvent, id chat.ID, resp chat.Responder)
	submitFunc = func(r *Router, ev chat.ModalEvent, id chat.ID, resp chat.Responder)
)

// bound declares a control that acts: its binding must match.
func bound(click clickFunc) component { return component{policy: guard.Bound, click: click} }

// inert declares a control that changes nothing a person did not see,
// saying why.
func inert(why string, click clickFunc) component {
	return component{policy: guard.Inert, why: why, click: click}
}

// saying gives a bound control's answer to a late click on its message,
// answered since (a double tap).
func (c component) saying(spent string) component { c.spent = spent; return c }

// boundForm and inertForm declare the submits of forms.
func boundForm(submit submitFunc) component { return component{policy: guard.Bound, submit: submit} }
func inertForm(why string, submit submitFunc) component {
	return component{policy: guard.Inert, why: why, submit: submit}
}

// actionOf is the action a control's id carries, by kind ("" for none).
func actionOf(id chat.ID) string {
	arg := func(i int) string {
		if i < len(id.Args) {
			return id.Args[i]
		}
		return ""
	}
	switch id.Kind {
	case sessionsKind, schedule.Kind, voice.Kind, panel.IDKind:
		return arg(0)
	case landKind, land.WorktreeKind, approval.IDKind:
		return arg(1)
	case "key":
		if len(id.Args) == 4 && id.Args[1] == "" {
			return "refresh"
		}
		return "press"
	}
	return ""
}

// Handlers, in the shape of the table.
var (
	landPressed = func(r *Router, ev chat.ComponentEvent, id chat.ID, resp chat.Responder) {
		r.landAction(ev, id.Args[0], id.Args[1], id.Args[2:], resp) // land.go
	}
	landSubmitted = func(r *Router, ev chat.ModalEvent, id chat.ID, resp chat.Responder) {
		r.landModal(ev, id.Args[0], id.Args[1], resp) // land.go
	}
	sessionsPressed = func(r *Router, ev chat.ComponentEvent, id chat.ID, resp chat.Responder) {
		r.sessionsAction(ev, id.Args, resp)
	}
	keyPressed = func(r *Router, ev chat.ComponentEvent, id chat.ID, resp chat.Responder) {
		r.screenButton(ev, id.Args, resp)
	}
	voicePressed = func(r *Router, ev chat.ComponentEvent, id chat.ID, resp chat.Responder) {
		r.voiceAction(ev, id.Args[0], id.Args[1], resp) // voice.go
	}
	voiceSubmitted = func(r *Router, ev chat.ModalEvent, id chat.ID, resp chat.Responder) {
		r.voiceModal(ev, id.Args[1], resp)
	}
	wtPressed = func(r *Router, ev chat.ComponentEvent, id chat.ID, resp chat.Responder) {
		r.worktreeAction(ev, id.Args, resp)
	}
	panelPressed = func(r *Router, ev chat.ComponentEvent, id chat.ID, resp chat.Responder) {
		r.panelAction(ev, id.Args, resp)
	}
	cardPressed = func(r *Router, ev chat.ComponentEvent, id chat.ID, resp chat.Responder) {
		r.answerCard(ev.Server, id.Args[0], approval.Action{Name: id.Args[1], Args: id.Args[2:], Values: ev.Values, User: chat.Mention(ev.User)},
			clicked{ev.MessageID, ev.Content, ev.Rows, ev.FileIDs}, resp)
	}
	cardSubmitted = func(r *Router, ev chat.ModalEvent, id chat.ID, resp chat.Responder) {
		r.answerCard(ev.Server, id.Args[0], approval.Action{Name: id.Args[1], Args: id.Args[2:], Fields: ev.Values, User: chat.Mention(ev.User)},
			clicked{ev.MessageID, ev.Content, ev.Rows, ev.FileIDs}, resp)
	}
)

// components is the table. A kind's id must carry as many arguments as
// its handler reads (minArgs).
var components = map[control]component{
	{sessionsKind, "take"}:   bound(sessionsPressed),
	{sessionsKind, "resume"}: bound(sessionsPressed),
	{sessionsKind, "fork"}:   bound(sessionsPressed),
	{sessionsKind, "here"}:   bound(sessionsPressed),

	{"key", "press"}:   bound(keyPressed),
	{"key", "refresh"}: inert("Refresh presses no key: it redraws the pane as it is now", keyPressed),

	{dialogKind, ""}: bound(func(r *Router, ev chat.ComponentEvent, id chat.ID, resp chat.Responder) {
		r.dialogAnswer(ev, id.Args, resp)
	}),

	{schedule.Kind, "cancel"}: bound(func(r *Router, ev chat.ComponentEvent, id chat.ID, resp chat.Responder) {
		r.scheduleAction(ev, id.Args, resp)
	}),

	{voice.Kind, voice.Send}:   bound(voicePressed).saying(voice.Stale(false)),
	{voice.Kind, voice.Cancel}: bound(voicePressed).saying(voice.Stale(false)),
	{voice.Kind, voice.Edit}:   inert("Edit… only opens the form, prefilled from the transcript ccbridge holds; its submit is bound", voicePressed),
	{voice.Kind, voice.Submit}: boundForm(voiceSubmitted).saying(voice.Stale(false)),

	{panel.IDKind, "start"}:   bound(panelPressed),
	{panel.IDKind, "stop"}:    bound(panelPressed),
	{panel.IDKind, "choose"}:  bound(panelPressed),
	{panel.IDKind, "refresh"}: inert("Refresh redraws the panel from ccbridge's own records", panelPressed),
	{panel.IDKind, "web"}: inert("it only answers the owner who clicked, privately, with a link to the server's sessions in the web view", //
		func(r *Router, ev chat.ComponentEvent, _ chat.ID, resp chat.Responder) { r.panelWeb(ev, resp) }), // web.go

	{landKind, "commitask"}:   inert("it only opens the commit form; committing is the form's submit, bound to this message", landPressed),
	{landKind, "discard"}:     bound(landPressed),
	{landKind, "merge"}:       bound(landPressed),
	{landKind, "remove"}:      bound(landPressed),
	{landKind, "keep"}:        inert("Keep changes nothing: it only says so", landPressed),
	{landKind, "commitforce"}: boundForm(landSubmitted),
	{landKind, "commit"}: inertForm("the form of /commit in a thread's worktree opens from the command, so no message carries it; "+
		"it commits only there, with the message the person typed into it", landSubmitted),

	{land.WorktreeKind, land.KeptDelete}:  bound(wtPressed),
	{land.WorktreeKind, land.KeptConfirm}: bound(wtPressed),
	{land.WorktreeKind, land.KeptCancel}:  bound(wtPressed), // redraws the text of the clicked message, so it must be ccbridge's
	{land.WorktreeKind, land.KeptKeep}:    bound(wtPressed),

	{lateKind, ""}: bound(func(r *Router, ev chat.ComponentEvent, id chat.ID, resp chat.Responder) {
		r.deliverAnyway(ev, id.Args, resp)
	}).saying(intake.OfferUsedText),

	{state.ResumeKind, ""}: {policy: guard.Bound, check: (*Router).resumeBinding,
		click: func(r *Router, ev chat.ComponentEvent, id chat.ID, resp chat.Responder) {
			r.continueAtResetButton(ev, id.Args, resp)
		}},
}

// minArgs is how many arguments a kind's id needs for its handler.
var minArgs = map[string]int{sessionsKind: 2, "key": 0, dialogKind: 0, schedule.Kind: 1, voice.Kind: 2, panel.IDKind: 1,
	landKind: 2, land.WorktreeKind: 2, lateKind: 0, state.ResumeKind: 1, approval.IDKind: 2}

// cardActions are the actions of a prompt's card. Those that approve
// something are bound to the card; the others refuse, or only open a
// form or go back a step, and must work on a card someone tampered with.
var cardActions = map[string]bool{
	"allow": true, "always": true, "alwayssel": true,
	"planaccept": true, "plandefault": true, "planedit": true, "planedited": true,
	"qb": true, "qs": true, "qo": true, "qtext": true, "submit": true,
	"deny": false, "denymsg": false, "denytext": false, "back": false,
	"plankeep": false, "plantext": false, "chat": false, "chattext": false,
}

func init() {
	for action, approves := range cardActions {
		c := component{policy: guard.Bound, click: cardPressed, submit: cardSubmitted, check: (*Router).cardBinding, refusal: cardChanged}
		if !approves {
			c = component{policy: guard.Inert, why: "it refuses, or only opens a form or goes back a step: it approves nothing, and must work on a tampered card",
				click: cardPressed, submit: cardSubmitted}
		}
		components[control{approval.IDKind, action}] = c
	}
}

// HandleComponent handles a click on one of this instance's controls.
func (r *Router) HandleComponent(ev chat.ComponentEvent, resp chat.Responder) {
	resp = r.fit(ev.Server, r.binding(ev.Server, ev.ChannelID, resp)) // limits.go
	id, ok := r.ours(ev.CustomID, ev.Server, ev.User, resp)
	if !ok {
		return
	}
	c, ok := r.component(id)
	if !ok || c.click == nil {
		_ = resp.Respond(chat.Reply{Content: "This button is no longer valid.", Ephemeral: true})
		return
	}
	if !r.guarded(c, ev.Server, ev.ChannelID, id, guard.Shown{ID: ev.MessageID, Content: ev.Content, Rows: ev.Rows, FileIDs: ev.FileIDs}, ev.User, resp) {
		return
	}
	c.click(r, ev, id, resp)
}

// HandleModal handles a submitted form of one of this instance's controls:
// a bound form counts only from the message it was opened from.
func (r *Router) HandleModal(ev chat.ModalEvent, resp chat.Responder) {
	resp = r.fit(ev.Server, r.binding(ev.Server, ev.ChannelID, resp)) // limits.go
	id, ok := r.ours(ev.CustomID, ev.Server, ev.User, resp)
	if !ok {
		return
	}
	c, ok := r.component(id)
	if !ok || c.submit == nil {
		_ = resp.Respond(chat.Reply{Content: "This form is no longer valid.", Ephemeral: true})
		return
	}
	if !r.guarded(c, ev.Server, ev.ChannelID, id, guard.Shown{ID: ev.MessageID, Content: ev.Content, Rows: ev.Rows, FileIDs: ev.FileIDs}, ev.User, resp) {
		return
	}
	c.submit(r, ev, id, resp)
}

// component finds the entry of an id, with the arguments its handler reads.
func (r *Router) component(id chat.ID) (component, bool) {
	c, ok := components[control{id.Kind, actionOf(id)}]
	if !ok || len(id.Args) < minArgs[id.Kind] || !c.policy.Valid() {
		return component{}, false
	}
	return c, true
}

// guarded runs the entry's guard; a refused action is answered and logged,
// and nothing else happens.
func (r *Router) guarded(c component, server, channelID string, id chat.ID, shown guard.Shown, u chat.User, resp chat.Responder) bool {
	if c.policy == guard.Inert {
		return true
	}
	check := c.check
	if check == nil {
		check = func(r *Router, server, channelID string, _ chat.ID, shown guard.Shown) error {
			return r.guard.Check(r.ctx, server, channelID, shown)
		}
	}
	if err := check(r, server, channelID, id, shown); err != nil {
		r.opt.Log.Warn("refused an action from a message that is not ccbridge's as drawn", "kind", id.Kind, "action", actionOf(id),
			"message", shown.ID, "channel", channelID, "user", u.ID, "err", err)
		refusal := c.refusal
		switch {
		case errors.Is(err, guard.ErrSpent) && c.spent != "":
			refusal = c.spent
		case refusal == "" || errors.Is(err, guard.ErrSpent):
			refusal = guard.RefusalFor(err)
		}
		_ = resp.Respond(chat.Reply{Content: refusal, Ephemeral: true})
		return false
	}
	return true
}

// cardBinding checks a card's click against the binding its request
// keeps. A request closed or gone is left to answerCard, which says so: a
// closed request takes no answer. answerCard checks the binding again
// inside its locked step (a click may redraw the card meanwhile).
func (r *Router) cardBinding(server, _ string, id chat.ID, shown guard.Shown) error {
	req, err := r.opt.Store.Requests.Get(id.Args[0])
	if err != nil || req.Server != server || req.Status != state.RequestPending {
		return nil
	}
	if req.MessageID == "" {
		r.waitCardRecorded(id.Args[0])
		if req, err = r.opt.Store.Requests.Get(id.Args[0]); err != nil || req.Status != state.RequestPending {
			return nil
		}
	}
	if !guard.Matches(req.MessageID, req.CardHash, shown) {
		return guard.ErrChanged
	}
	return nil
}

// resumeBinding checks a Continue at reset click against the binding the
// hook recorded with the offer (state.Resume), waiting for it as the guard
// does: the hook records it once Discord has answered its post. No offer:
// the handler says it is no longer open.
func (r *Router) resumeBinding(server, channelID string, id chat.ID, shown guard.Shown) error {
	ext, err := state.OpenExtras(r.opt.Store.Dir)
	if err != nil {
		return err
	}
	check := func() error {
		all, _ := ext.Resumes.List()
		for k, res := range all {
			if res.Server == server && res.ChannelID == channelID && chat.ArgIs(id.Args[0], k) {
				if !guard.Matches(res.MessageID, res.Face, shown) {
					return guard.ErrChanged
				}
				return nil
			}
		}
		return nil
	}
	deadline := time.Now().Add(r.guard.Wait)
	for {
		err := check()
		if err == nil || !time.Now().Before(deadline) {
			return err
		}
		select {
		case <-r.ctx.Done():
			return err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// newGuard opens the bindings of messages the router draws, in the durable
// directory. Without them every bound control is refused, never allowed.
func newGuard(opt Options) *guard.Guard {
	if opt.Registry == nil {
		return guard.New(nil)
	}
	b, err := state.OpenBindings(opt.Registry.Dir)
	if err != nil {
		opt.Log.Error("cannot record which messages ccbridge drew: their buttons will refuse", "err", err)
	}
	return guard.New(b)
}

// bind records what a message the router drew shows; logged, not
// returned: the message is out, and a click on it will be refused.
// bindTimeout bounds recording a binding (a locked write in the state dir).
const bindTimeout = 5 * time.Second

func (r *Router) bind(server, channelID, messageID string, m chat.Message, fileIDs []string) {
	if messageID == "" {
		return
	}
	// A message posted as ccbridge stops (a Deliver anyway put back) is
	// bound too: its button is for after the restart.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.ctx), bindTimeout)
	defer cancel()
	if err := r.guard.Bind(ctx, server, channelID, messageID, m, fileIDs); err != nil {
		r.opt.Log.Error("could not record a message's binding", "message", messageID, "err", err)
	}
}

// binding is a Responder that binds every message its Edit and Update
// draw (and unbinds one left without controls).
func (r *Router) binding(server, channelID string, resp chat.Responder) chat.Responder {
	return bindingResponder{Responder: resp, r: r, server: server, channel: channelID}
}

type bindingResponder struct {
	chat.Responder
	r       *Router
	server  string
	channel string
}

func (b bindingResponder) Edit(m chat.Reply) (string, error) {
	id, err := b.Responder.Edit(m)
	// An answer for one person is bound when it has controls (Telegram's
	// private chat draws them, acting in this channel).
	if err == nil && (!m.Ephemeral || len(m.Rows) > 0) {
		b.r.bind(b.server, b.channel, id, m, nil)
	}
	return id, err
}

func (b bindingResponder) Update(m chat.Message) (string, error) {
	id, err := b.Responder.Update(m)
	if err == nil {
		b.r.bind(b.server, b.channel, id, m, nil)
	}
	return id, err
}

// bindingReplier is a Replier whose posts with controls are bound. It cuts
// them to fit first (fit is idempotent): what is bound is what is sent.
type bindingReplier struct {
	Replier
	r *Router
}

func (b bindingReplier) Post(ctx context.Context, server, channelID string, m chat.Message) (string, error) {
	if len(m.Rows) == 0 {
		return b.Replier.Post(ctx, server, channelID, m)
	}
	m.Content = chat.Fit(m.Content, chat.Limit)
	id, files, err := b.Replier.PostCard(ctx, server, channelID, m)
	if err == nil {
		b.r.bind(server, channelID, id, m, files)
	}
	return id, err
}
