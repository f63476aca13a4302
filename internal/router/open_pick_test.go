package router

import (
	"context"
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/guard"
)

// The folder picker stands in for autocomplete on Telegram alone: /open
// with no folder lists them, with a part of a name those it matches; a
// folder that resolves is opened, and what would be refused (".." or no
// match) is refused as typed. Options carry a hash, not the path.
func TestOpenFolderPicker(t *testing.T) {
	f := newOpenRouter(t, true)
	discord := target{rt: route{server: config.Server{Name: "home", OpenRoots: []string{f.root}}}}
	tg := target{rt: route{server: config.Server{Name: "phone", Platform: config.PlatformTelegram, OpenRoots: []string{f.root}}}}
	if _, ok := f.r.folderPicker(discord, "", ""); ok {
		t.Fatal("a picker on Discord, which suggests as /open is typed")
	}
	labels := func(reply chat.Reply) []string {
		var out []string
		for _, row := range reply.Rows {
			if row.Select == nil {
				continue
			}
			for _, o := range row.Select.Options {
				if strings.Contains(o.Value, "/") || o.Value != chat.ShortHash(o.Label) {
					t.Errorf("option %q carries %q", o.Label, o.Value)
				}
				out = append(out, o.Label)
			}
		}
		return out
	}
	all, ok := f.r.folderPicker(tg, "", "")
	if got := labels(all); !ok || len(got) < 3 || !strings.Contains(strings.Join(got, " "), "/web") {
		t.Fatalf("/open alone offers %q (%v)", got, ok)
	}
	if err := chat.CheckMessage(chat.Message{Content: all.Content, Rows: all.Rows}); err != nil {
		t.Errorf("the picker breaks a message's rules: %v", err)
	}
	some, ok := f.r.folderPicker(tg, "inter", "")
	if got := labels(some); !ok || len(got) != 1 || !strings.HasSuffix(got[0], "/api/internal") {
		t.Fatalf("/open inter offers %q (%v)", got, ok)
	}
	for _, typed := range []string{"web", "../web", "nothing-like-it"} {
		if pick, ok := f.r.folderPicker(tg, typed, ""); ok {
			t.Errorf("/open %s offers a picker: %q", typed, labels(pick))
		}
	}
}

// The picker names folders, so it is for the asker alone (ephemeral: on
// Telegram, their private chat with the bot, which the group never
// reads). Its controls are bound there too, in the channel /open ran in:
// a pick from the message drawn acts, once; a copy does not.
func TestOpenFolderPickerIsForTheAskerAlone(t *testing.T) {
	f := newOpenRouter(t, true)
	tg := target{rt: route{server: config.Server{Name: "phone", Platform: config.PlatformTelegram, OpenRoots: []string{f.root}}}}
	pick, ok := f.r.folderPicker(tg, "", "")
	if !ok || !pick.Ephemeral {
		t.Fatalf("the picker is not for the asker alone: %+v (%v)", pick, ok)
	}
	resp := f.r.binding("home", channel, fakeResponder{l: f.l})
	id, err := resp.Edit(pick)
	if err != nil || id == "" {
		t.Fatalf("drawn as %q: %v", id, err)
	}
	shown := guard.Shown{ID: id, Content: pick.Content, Rows: pick.Rows}
	if err := f.r.guard.Check(context.Background(), "home", channel, shown); err != nil {
		t.Fatalf("the private picker is not bound where /open ran: %v", err)
	}
	f.r.guard.Wait = guardWait
	if err := f.r.guard.Check(context.Background(), "home", channel, guard.Shown{ID: "copy", Content: pick.Content, Rows: pick.Rows}); err == nil {
		t.Error("a copy of the picker passes the guard")
	}
}

// Why a typed folder is not opened names paths: on Telegram it goes to the
// asker alone (the group reads every answer); on Discord as before.
func TestOpenRefusalNamingPathsIsPrivateOnTelegram(t *testing.T) {
	f := newOpenRouter(t, true)
	for _, platform := range []string{config.PlatformTelegram, ""} {
		tg := target{rt: route{server: config.Server{Name: "phone", Platform: platform, OpenRoots: []string{f.root}}}}
		reply := f.r.openFolder(chat.CommandEvent{Server: "phone", ChannelID: channel, User: chat.User{ID: owner}, Name: openName,
			Options: map[string]string{"path": "../../no-such-folder"}}, tg)
		if !strings.HasPrefix(reply.Content, "⚠️ Not opened") || reply.Ephemeral != (platform == config.PlatformTelegram) {
			t.Errorf("platform %q: %+v", platform, reply)
		}
	}
}
