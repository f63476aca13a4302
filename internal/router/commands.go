package router

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/land"
	"github.com/ccbridge/ccbridge/internal/opened"
	"github.com/ccbridge/ccbridge/internal/schedule"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/usage"
	"github.com/ccbridge/ccbridge/internal/weblink"
)

// Commands are the slash commands ccbridge registers in every guild.
// Descriptions stay short: a phone's picker cuts them at about 50
// characters.
func Commands() []chat.CommandSpec {
	return append(append([]chat.CommandSpec{
		{Name: "status", Description: "Show this channel's Claude session"},
		{Name: "stop", Description: "Interrupt Claude's turn (like Esc)"},
		{Name: "new", Description: "Start a fresh conversation (/clear)"},
		{Name: "screen", Description: "Show the terminal, with keys to press"},
		{Name: "mode", Description: "Switch the permission mode", Options: []chat.OptionSpec{
			{Name: "mode", Description: "permission mode", Required: true, Choices: switchableModes}}},
		{Name: "model", Description: "Switch the model", Options: []chat.OptionSpec{
			{Name: "name", Description: "model alias or name, e.g. sonnet or opus", Required: true, Autocomplete: true}}},
		{Name: "thread", Description: "Start a thread with its own Claude", Options: []chat.OptionSpec{
			{Name: "name", Description: "thread name", Required: true, MaxLength: maxThreadName},
			{Name: "prompt", Description: "first message for Claude in the thread"}}},
		usage.Command,
	}, slices.Concat(SessionCommands(), land.Commands(), schedule.Commands(), opened.Commands(), []chat.CommandSpec{weblink.Command})...), helpCommand) // internal/conversations, internal/land, internal/schedule, internal/opened, internal/weblink
}

// switchableModes are the permission modes a running session can switch
// to: the ones Shift+Tab cycles through (session.SetMode). The others
// (bypassPermissions, dontAsk) need a restart with the mode in the config.
var switchableModes = []chat.Choice{
	{Name: "Manual: ask before edits", Value: "default"},
	{Name: "Accept edits", Value: "acceptEdits"},
	{Name: "Plan first, then ask", Value: "plan"},
	{Name: "Auto", Value: "auto"},
}

var helpCommand = chat.CommandSpec{Name: "help", Description: "List ccbridge's commands"}

// helpText lists every command, from the same list that registers them.
func helpText() string {
	var b strings.Builder
	b.WriteString("**ccbridge commands** (in a project channel or one of its threads; only the owners can use them)\n")
	for _, c := range Commands() {
		fmt.Fprintf(&b, "\n`/%s`", c.Name)
		for _, o := range c.Options {
			if o.Required {
				fmt.Fprintf(&b, " `%s`", o.Name)
			} else {
				fmt.Fprintf(&b, " `[%s]`", o.Name)
			}
		}
		b.WriteString(" — " + c.Description)
	}
	b.WriteString("\n\nAnything else you write in the channel goes to Claude.")
	return b.String()
}

// models are the model aliases /model suggests: the CLI's own list (in
// its binary, 2.1.328), then default; any other name Claude Code accepts
// can be typed in full.
var models = []chat.Choice{
	{Name: "sonnet — the latest Sonnet", Value: "sonnet"},
	{Name: "opus — the latest Opus", Value: "opus"},
	{Name: "haiku — the latest Haiku", Value: "haiku"},
	{Name: "fable — the latest Fable", Value: "fable"},
	{Name: "best — the most capable model available", Value: "best"},
	{Name: "sonnet[1m] — Sonnet with a 1M-token context", Value: "sonnet[1m]"},
	{Name: "opus[1m] — Opus with a 1M-token context", Value: "opus[1m]"},
	{Name: "fable[1m] — Fable with a 1M-token context", Value: "fable[1m]"},
	{Name: "opusplan — Opus to plan, Sonnet to work", Value: "opusplan"},
	{Name: "default — the account's default model", Value: "default"},
}

// suggesters give the suggestions of each option that autocompletes, by
// command and option name.
var suggesters = map[[2]string]func(r *Router, tg target, typed string) []chat.Choice{
	{"model", "name"}:  (*Router).suggestModels,
	{openName, "path"}: (*Router).suggestFolders, // open.go
}

// HandleAutocomplete suggests values for an option being typed into: nil
// (no answer) for a channel this daemon does not map, which another
// machine sharing the bot may; nothing for anyone but an owner.
func (r *Router) HandleAutocomplete(ev chat.AutocompleteEvent) []chat.Choice {
	tg, ok := r.resolve(ev.Server, ev.ChannelID, ev.ParentID)
	if !ok && ev.Command == openName {
		tg, ok = r.panelTarget(ev.Server, ev.ChannelID) // open.go
	}
	if !ok {
		return nil
	}
	suggest, ok := suggesters[[2]string{ev.Command, ev.Option}]
	if !ok || !r.allowed(ev.Server, ev.User) {
		return []chat.Choice{}
	}
	out := suggest(r, tg, strings.TrimSpace(ev.Value))
	return out[:min(len(out), chat.MaxChoices)]
}

// suggestModels suggests the session's own model first (when it is not an
// alias), then the aliases, those matching what was typed.
func (r *Router) suggestModels(tg target, typed string) []chat.Choice {
	var all []chat.Choice
	if st, err := r.opt.Sessions.Status(r.ctx, tg.key); err == nil && st.Session.Model != "" &&
		!slices.ContainsFunc(models, func(c chat.Choice) bool { return c.Value == st.Session.Model }) {
		all = append(all, chat.Choice{Name: chat.Clip(st.Session.Model+" — this session's model", 100), Value: chat.Clip(st.Session.Model, 100)})
	}
	all = append(all, models...)
	typed = strings.ToLower(typed)
	var out []chat.Choice
	for _, c := range all {
		if strings.Contains(strings.ToLower(c.Name), typed) {
			out = append(out, c)
		}
	}
	return out
}

// screenTTL is how long /screen buttons may press keys: what was on screen
// when they were drawn may be gone (a dialog answered, another opened).
const screenTTL = time.Minute

// screenRows are the /screen buttons: a label and the key name sent (an
// empty name only refreshes the screen). Each carries its session's key
// (hashed when long), the time it was drawn and the hash of the dialog it
// was drawn over (dialogHash).
func screenRows(instance, key, dialog string, drawn time.Time) []chat.Row {
	layout := [][][2]string{
		{{"1", "1"}, {"2", "2"}, {"3", "3"}, {"4", "4"}, {"Enter", "Enter"}},
		{{"Esc", "Escape"}, {"↑", "Up"}, {"↓", "Down"}, {"Tab", "Tab"}, {"⇧Tab", "BTab"}},
		{{"Refresh", ""}},
	}
	at := strconv.FormatInt(drawn.Unix(), 36)
	var rows []chat.Row
	for _, row := range layout {
		var buttons []chat.Button
		for _, b := range row {
			id, err := chat.ID{Instance: instance, Kind: "key", Args: []string{key, b[1], at, dialog}}.Encode()
			if err != nil {
				return nil // no buttons rather than a broken message
			}
			style := chat.Secondary
			if b[1] == "Enter" {
				style = chat.Primary
			}
			buttons = append(buttons, chat.Button{Label: b[0], CustomID: id, Style: style})
		}
		rows = append(rows, chat.Row{Buttons: buttons})
	}
	return rows
}

// dialogHash stands for the dialog a screen shows, as the session's agent
// draws it (session.ScreenDialog; the same for every screen without one):
// a key is pressed only while the dialog it was drawn over is still the
// one open, never into another that replaced it.
func dialogHash(dialog string) string { return chat.ShortHash(dialog) }

// drawScreen draws a screen of the session key with its buttons. A screen
// whose dialog cannot be read gets no buttons.
func (r *Router) drawScreen(key, note, screen string) chat.Reply {
	dialog, err := r.opt.Sessions.ScreenDialog(key, screen)
	reply := screenReply(r.opt.Instance, key, note, screen, dialogHash(dialog), r.now())
	if err != nil {
		reply.Rows = nil
	}
	return reply
}

// screenReply draws a screen with its buttons, after an optional note;
// dialog is the dialogHash of the dialog it shows.
func screenReply(instance, key, note, screen, dialog string, drawn time.Time) chat.Reply {
	if note != "" {
		note += "\n"
	}
	screen = strings.ReplaceAll(screen, "```", "ʼʼʼ")
	body := note + "```\n" + screen + "\n```"
	if n := len([]rune(note)); len([]rune(body)) > chat.Limit-40 {
		r := []rune(screen)
		body = note + "```\n…" + string(r[len(r)-(chat.Limit-60-n):]) + "\n```"
	}
	return chat.Reply{Content: body, Rows: screenRows(instance, key, dialog, drawn)}
}

// HandleCommand runs a slash command. Interactions must be answered within
// three seconds, so the work happens after a deferral.
func (r *Router) HandleCommand(ev chat.CommandEvent, resp chat.Responder) {
	resp = r.fit(ev.Server, r.binding(ev.Server, ev.ChannelID, resp)) // limits.go; components.go
	log := r.opt.Log.With("command", ev.Name, "user", ev.User.ID, "channel", ev.ChannelID)
	tg, ok := r.resolve(ev.Server, ev.ChannelID, ev.ParentID)
	if !ok && (ev.Name == openName || ev.Name == weblink.Name) {
		tg, ok = r.panelTarget(ev.Server, ev.ChannelID) // open.go
	}
	if !ok {
		// Another machine sharing the bot may own the channel; only the
		// one that leads the panel channel says that none does.
		if text := r.unmappedReply(ev); text != "" {
			_ = resp.Respond(chat.Reply{Content: text, Ephemeral: true})
		}
		return
	}
	if !r.allowed(ev.Server, ev.User) {
		log.Info("refused a command from someone who is not an owner")
		_ = resp.Respond(chat.Reply{Content: refusalForOthers, Ephemeral: true})
		return
	}
	if ev.Name == weblink.Name {
		r.runWeb(ev, tg, resp) // web.go: answered privately
		return
	}
	if r.landInteractive(ev, tg, resp) { // land.go: /commit's form
		return
	}
	if err := resp.Defer(false); err != nil {
		log.Error("could not defer", "err", err)
		return
	}
	reply := r.runCommand(ev, tg)
	if _, err := resp.Edit(reply); err != nil {
		log.Error("could not answer", "err", err)
	}
}

// unmappedReply is this daemon's answer to a command in a channel it does
// not map, or "" to stay silent. Every daemon sharing the bot sees the
// command and Discord takes one answer, so only the one that leads the
// server's panel channel answers (the first by machine name of those up;
// without a panel channel, none), and not when a machine that is up lists
// the channel in its panel: that one answers.
func (r *Router) unmappedReply(ev chat.CommandEvent) string {
	panelled := false
	for _, s := range r.conf().Servers {
		panelled = panelled || (s.Name == ev.Server && s.GeneralChannelID != "")
	}
	if !panelled {
		return ""
	}
	if r.opt.Fleet == nil {
		return "This channel is not a ccbridge project channel."
	}
	if !r.opt.Fleet.Leads(ev.Server) {
		return ""
	}
	for _, ch := range []string{ev.ChannelID, ev.ParentID} {
		if machine, up, ok := r.opt.Fleet.Owner(ev.Server, ch); ok {
			if up {
				return ""
			}
			return "This channel belongs to the machine " + machine + ", which is stopped or unreachable: its ccbridge is not running."
		}
	}
	return "This channel is not a ccbridge project channel."
}

func (r *Router) runCommand(ev chat.CommandEvent, tg target) chat.Reply {
	ctx := r.ctx
	key, rt := tg.key, tg.rt
	who := r.agentOf(tg)
	noSession := chat.Reply{Content: "No " + who + " session is running in this channel. Send a message to start one."}
	switch ev.Name {
	case openName, closeName:
		return r.runOpen(ev, tg) // open.go
	case "sessions":
		return r.withOpened(r.runSessions(ev, tg), rt.server.Name) // sessions.go, open.go
	case "fork":
		return r.runSessions(ev, tg) // sessions.go
	case "schedule", "schedules":
		return r.runSchedule(ev, tg) // schedule.go
	case "status":
		st, err := r.opt.Sessions.Status(ctx, key)
		if err != nil {
			return chat.Reply{Content: "⚠️ " + chat.ErrText(err)}
		}
		return chat.Reply{Content: statusText(r.conf().General.Machine, who, rt, st)}
	case "stop":
		if err := r.opt.Sessions.InterruptTurn(ctx, key); errors.Is(err, session.ErrNoPane) {
			return noSession
		} else if err != nil {
			return chat.Reply{Content: "⚠️ " + chat.ErrText(err)}
		}
		return chat.Reply{Content: "⏹ Interrupted " + who + ". Send a message to continue."}
	case "new":
		left := r.conversationID(key) // new.go
		if _, err := r.opt.Sessions.Deliver(ctx, key, "/clear"); errors.Is(err, session.ErrNoPane) {
			return noSession
		} else if err != nil {
			return chat.Reply{Content: "⚠️ " + chat.ErrText(err)}
		}
		r.forgetConversation(key, left)
		return chat.Reply{Content: "🆕 Started a fresh conversation."}
	case "screen":
		screen, err := r.opt.Sessions.Screen(ctx, key, screenLines)
		if errors.Is(err, session.ErrNoPane) {
			return noSession
		} else if err != nil {
			return chat.Reply{Content: "⚠️ " + chat.ErrText(err)}
		}
		return r.drawScreen(key, "", screen)
	case "help":
		return chat.Reply{Content: helpText()}
	case "mode":
		mode := ev.Options["mode"]
		if !slices.ContainsFunc(switchableModes, func(c chat.Choice) bool { return c.Value == mode }) {
			return chat.Reply{Content: "⚠️ " + mode + " cannot be switched to in a running session; set it as permission_mode in the config."}
		}
		if err := r.opt.Sessions.SetMode(ctx, key, mode); err != nil && !errors.Is(err, session.ErrNoPane) {
			return chat.Reply{Content: "⚠️ " + chat.ErrText(err)}
		}
		r.remember(key, func(g *state.Registered) { g.PermissionMode = mode })
		return chat.Reply{Content: "Permission mode: " + mode}
	case "model":
		name := strings.TrimSpace(ev.Options["name"])
		if name == "" || strings.ContainsAny(name, " \n") {
			return chat.Reply{Content: "⚠️ Give one model name, such as sonnet or opus."}
		}
		if err := r.opt.Sessions.SetModel(ctx, key, name); err != nil && !errors.Is(err, session.ErrNoPane) {
			return chat.Reply{Content: "⚠️ " + chat.ErrText(err)}
		}
		r.remember(key, func(g *state.Registered) { g.Model = name })
		return chat.Reply{Content: "Model: " + name}
	case "thread":
		return r.newThread(ev, tg)
	case usage.Command.Name:
		return chat.Reply{Content: r.usageText(tg)}
	}
	if reply, ok := r.runLand(ev, tg); ok { // land.go
		return reply
	}
	return chat.Reply{Content: "Unknown command /" + ev.Name}
}

// statusText answers /status; who names the project's agent.
func statusText(machine, who string, rt route, st session.Status) string {
	s := st.Session
	var b strings.Builder
	fmt.Fprintf(&b, "**%s** — %s\nMachine: %s\n", rt.label(), st.State, machine) // open.go
	if st.State == "stopped" {
		dir, _ := rt.project.ProjectPath()
		fmt.Fprintf(&b, "Directory: `%s`\nSend a message to start %s.", dir, who)
		return b.String()
	}
	fmt.Fprintf(&b, "Directory: `%s`\nPane: `%s`\n", s.Cwd, s.PaneID)
	model := s.Model
	if model == "" {
		model = who + "'s default"
	}
	mode := s.ModeSeen
	if mode == "" {
		mode = s.PermissionMode
	}
	fmt.Fprintf(&b, "Model: %s\nMode: %s\n", model, mode)
	if s.ClaudeSessionID != "" {
		fmt.Fprintf(&b, "%s session: `%s`\n", who, s.ClaudeSessionID)
	}
	if !s.LastEventAt.IsZero() {
		fmt.Fprintf(&b, "Last activity: %s ago (%s)", time.Since(s.LastEventAt).Round(time.Second), s.LastEvent)
	}
	return b.String()
}

// channelKey finds the session of the channel a component was clicked in,
// when arg (from its custom_id) names that session; a button of another
// session's message, or one copied elsewhere, matches nothing.
func (r *Router) channelKey(server, channelID, arg string) (string, bool) {
	if rt, ok := r.lookup(server, channelID); ok {
		key := rt.server.Name + "-" + rt.project.Name
		return key, chat.ArgIs(arg, key)
	}
	if tg, known := r.openedThread(server, channelID); known { // open.go
		return tg.key, tg.key != "" && chat.ArgIs(arg, tg.key)
	}
	for _, rt := range r.routeTable() {
		if rt.server.Name != server {
			continue
		}
		if key := session.ThreadKey(rt.server.Name, rt.project.Name, channelID); chat.ArgIs(arg, key) {
			return key, true
		}
	}
	return "", false
}

// screenButton answers a /screen button: a key is pressed only into the
// session of the channel the screen was shown in, within a minute of
// drawing it, and only while the dialog it was drawn over (or no dialog)
// is what the pane shows; Refresh always just redraws.
func (r *Router) screenButton(ev chat.ComponentEvent, args []string, resp chat.Responder) {
	if len(args) != 4 {
		_ = resp.Respond(chat.Reply{Content: "These buttons are from an older ccbridge; nothing was pressed. Run /screen again.", Ephemeral: true})
		return
	}
	key, ok := r.channelKey(ev.Server, ev.ChannelID, args[0])
	if !ok {
		r.opt.Log.Warn("a /screen button was used outside its session's channel", "channel", ev.ChannelID, "user", ev.User.ID)
		_ = resp.Respond(chat.Reply{Content: "These buttons belong to another session's screen; nothing was pressed. Run /screen here.", Ephemeral: true})
		return
	}
	name := args[1]
	drawn, err := strconv.ParseInt(args[2], 36, 64)
	if age := r.now().Sub(time.Unix(drawn, 0)); name != "" && (err != nil || age > screenTTL || age < -screenTTL) {
		_ = resp.Respond(chat.Reply{Content: "This screen is more than a minute old, so its keys may no longer mean what they show; nothing was pressed. Press Refresh or run /screen.", Ephemeral: true})
		return
	}
	r.pressKey(key, name, args[3], resp)
}

// screenChanged heads a screen redrawn instead of pressing a key.
const screenChanged = "⚠️ The screen changed since these keys were drawn, so nothing was pressed: here it is again."

// pressKey presses a key (none for Refresh) if the pane still shows the
// dialog the buttons were drawn over, and redraws the screen.
func (r *Router) pressKey(key, name, dialog string, resp chat.Responder) {
	if err := resp.DeferUpdate(); err != nil {
		return
	}
	ctx := r.ctx
	if name != "" {
		// The key answers whatever is open when it arrives: a dialog
		// answered elsewhere and replaced by another (a command that was
		// never shown here) must not get it. The message is redrawn in
		// place, so the stale buttons are gone for everyone.
		screen, err := r.opt.Sessions.Screen(ctx, key, screenLines)
		if err != nil {
			_, _ = resp.Edit(chat.Reply{Content: "⚠️ " + chat.ErrText(err)})
			return
		}
		if now, err := r.opt.Sessions.ScreenDialog(key, screen); err != nil {
			_, _ = resp.Edit(chat.Reply{Content: "⚠️ " + chat.ErrText(err)})
			return
		} else if dialogHash(now) != dialog {
			r.opt.Log.Info("a /screen key was not pressed: the dialog changed since it was drawn", "session", key, "key", name)
			_, _ = resp.Edit(r.drawScreen(key, screenChanged, screen))
			return
		}
		if err := r.opt.Sessions.PressKeys(ctx, key, name); err != nil {
			_, _ = resp.Edit(chat.Reply{Content: "⚠️ " + chat.ErrText(err)})
			return
		}
	}
	screen, err := r.opt.Sessions.Screen(ctx, key, screenLines)
	if err != nil {
		_, _ = resp.Edit(chat.Reply{Content: "⚠️ " + chat.ErrText(err)})
		return
	}
	_, _ = resp.Edit(r.drawScreen(key, "", screen))
	if name != "" {
		r.follow(key, screen, resp)
	}
}

// After a key, the screen message keeps following the pane for a while:
// Claude may redraw only after the first read (a busy machine, a slow
// dialog), and the person should see what the key did without pressing
// Refresh. Edits come only on a change, at most one per screenEditGap
// (Discord's edit limits).
const (
	screenFollow  = 10 * time.Second
	screenPoll    = 300 * time.Millisecond
	screenEditGap = 1500 * time.Millisecond
)

// screenFollower follows one session's pane; fields guarded by r.mu. Keys
// pressed meanwhile hand it their responder and a new deadline, so quick
// presses do not start followers that edit over each other.
type screenFollower struct {
	resp     chat.Responder
	end      time.Time
	shown    string // what the message shows
	latest   string // the newest read of the pane
	lastEdit time.Time
	// press counts the presses handed over: a read or an edit begun
	// before one is older than what the press drew.
	press int
}

// follow starts following key's pane after a press drew screen, or hands
// the press to the follower already running.
func (r *Router) follow(key, screen string, resp chat.Responder) {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	f, ok := r.followers[key]
	if !ok {
		f = &screenFollower{}
		r.followers[key] = f
		r.wg.Add(1)
		go func() { defer r.wg.Done(); r.followScreen(key, f) }()
	}
	f.resp, f.end, f.shown, f.latest, f.lastEdit = resp, now.Add(screenFollow), screen, screen, now
	f.press++
}

func (r *Router) followScreen(key string, f *screenFollower) {
	for {
		r.mu.Lock()
		now := time.Now()
		done := !now.Before(f.end)
		edit := f.latest != f.shown && (done || now.Sub(f.lastEdit) >= screenEditGap)
		resp, latest, press := f.resp, f.latest, f.press
		if done && !edit {
			delete(r.followers, key) // under the lock: no press is handed to a follower gone
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
		if edit {
			_, err := resp.Edit(r.drawScreen(key, "", latest))
			r.mu.Lock()
			if f.press == press {
				if err != nil {
					f.end = time.Time{} // the message is gone: stop
				}
				f.shown, f.lastEdit = latest, time.Now()
			}
			r.mu.Unlock()
			continue
		}
		select {
		case <-r.ctx.Done():
			return
		case <-time.After(screenPoll):
		}
		if screen, err := r.opt.Sessions.Screen(r.ctx, key, screenLines); err == nil {
			r.mu.Lock()
			if f.press == press {
				f.latest = screen
			}
			r.mu.Unlock()
		}
	}
}
