package router

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/opened"
)

// A front end without autocomplete (Telegram) cannot suggest /open's
// folder as it is typed. So /open with no folder, or with one that names
// none but matches some, answers with the matching folders to pick from.
// An option's value is a short hash of the folder as shown, never its
// path; a pick reads the path back from the picker as drawn (its binding
// holds it to what ccbridge drew), and opens it by the same rules as a
// typed one (opened.Resolve, opened.Around).

const openPickKind = "openpick"

// A pick is bound: it opens what the picker ccbridge drew showed.
func init() {
	components[control{openPickKind, ""}] = bound(func(r *Router, ev chat.ComponentEvent, id chat.ID, resp chat.Responder) {
		r.openPicked(ev, id, resp)
	})
	minArgs[openPickKind] = 1
}

// folderPicker is the picker for what was typed after /open, or false
// when the folder is to be opened (or refused) as typed.
func (r *Router) folderPicker(tg target, typed, iso string) (chat.Reply, bool) {
	if !tg.rt.server.Telegram() {
		return chat.Reply{}, false
	}
	typed = strings.TrimSpace(typed)
	roots := tg.rt.server.OpenRoots
	if typed != "" {
		if _, err := opened.Resolve(roots, typed); err == nil || strings.Contains(typed, "..") {
			return chat.Reply{}, false
		}
	}
	found := opened.Suggest(roots, typed, time.Now().Add(opened.SuggestBudget))
	if len(found) == 0 {
		return chat.Reply{}, false
	}
	if iso == "" {
		iso = "none"
	}
	id, err := chat.ID{Instance: r.opt.Instance, Kind: openPickKind, Args: []string{iso}}.Encode()
	if err != nil {
		return chat.Reply{}, false
	}
	sel := &chat.Select{CustomID: id, Placeholder: "a folder", MinValues: 1, MaxValues: 1}
	for _, f := range found {
		sel.Options = append(sel.Options, chat.Option{Label: f.Name, Value: chat.ShortHash(f.Value), Description: "open it with its own Claude"})
	}
	text := "📂 Which folder? Pick one to open it with its own Claude."
	if typed != "" {
		text = fmt.Sprintf("📂 No folder is `%s`; the folders it matches:", chat.Clip(typed, 200))
	}
	// The folder names are for the asker alone: on Telegram an ephemeral
	// answer goes to their private chat with the bot, and its pick acts
	// in the channel /open ran in (the front end keeps which), bound there.
	return chat.Reply{Content: text, Rows: []chat.Row{{Select: sel}}, Ephemeral: true}, true
}

// openPicked opens the folder picked: the one the picker showed for the
// value chosen, in the channel the picker is in.
func (r *Router) openPicked(ev chat.ComponentEvent, id chat.ID, resp chat.Responder) {
	var path string
	for _, row := range ev.Rows {
		if row.Select == nil || row.Select.CustomID != ev.CustomID || len(ev.Values) != 1 {
			continue
		}
		if i := slices.IndexFunc(row.Select.Options, func(o chat.Option) bool { return o.Value == ev.Values[0] }); i >= 0 {
			path = row.Select.Options[i].Label
		}
	}
	tg, ok := r.resolve(ev.Server, ev.ChannelID, "")
	if !ok {
		tg, ok = r.panelTarget(ev.Server, ev.ChannelID) // open.go
	}
	if path == "" || chat.ShortHash(path) != ev.Values[0] || !ok {
		_ = resp.Respond(chat.Reply{Content: "This choice is no longer valid: use /open again.", Ephemeral: true})
		return
	}
	iso := id.Args[0]
	reply := r.openFolder(chat.CommandEvent{Server: ev.Server, ChannelID: ev.ChannelID, User: ev.User, Name: openName,
		Options: map[string]string{"path": path, "isolation": iso}}, tg)
	if _, err := resp.Update(chat.Message{Content: reply.Content}); err != nil {
		r.opt.Log.Warn("could not answer a folder picked", "err", err)
	}
}
