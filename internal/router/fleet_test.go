package router

import (
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/chat"
)

type fakeFleet struct {
	leads  bool
	owners map[string]bool // channel → its machine ("m") is up
}

func (f fakeFleet) Leads(string) bool { return f.leads }
func (f fakeFleet) Owner(_, ch string) (string, bool, bool) {
	up, ok := f.owners[ch]
	return "m", up, ok
}

// Several daemons share a bot and all see every command: a daemon is
// silent in channels it does not map, unless it leads the server's panel
// channel, so that exactly one says the channel is no project's.
func TestUnmappedChannelCommandsAreAnsweredByTheLeaderOnly(t *testing.T) {
	r, _, _, l, _ := newRouter(t)
	owner := chat.User{ID: owner}
	unmapped := chat.CommandEvent{Server: "home", ChannelID: "100000000000000777", User: owner, Name: "status"}

	r.HandleCommand(unmapped, fakeResponder{l: l}) // no panel channel: nobody answers
	if got := l.all(); len(got) != 0 {
		t.Fatalf("a daemon without a panel channel answered: %q", got)
	}
	r.opt.Config.Servers[0].GeneralChannelID = "100000000000000888"
	r.opt.Fleet = fakeFleet{leads: false}
	r.HandleCommand(unmapped, fakeResponder{l: l})
	if got := l.all(); len(got) != 0 {
		t.Fatalf("a daemon that does not lead answered: %q", got)
	}
	r.opt.Fleet = fakeFleet{leads: true}
	r.HandleCommand(unmapped, fakeResponder{l: l})
	if got := l.all(); len(got) != 1 || !strings.Contains(got[0], "not a ccbridge project channel") {
		t.Fatalf("the leader's answer: %q", got)
	}
	// Another machine's channel (or a thread under it): its machine
	// answers while up; the leader says it is unreachable otherwise.
	r.opt.Fleet = fakeFleet{leads: true, owners: map[string]bool{"100000000000000777": true}}
	r.HandleCommand(unmapped, fakeResponder{l: l})
	thread := unmapped
	thread.ChannelID, thread.ParentID = "100000000000000778", "100000000000000777"
	r.HandleCommand(thread, fakeResponder{l: l})
	if got := l.all(); len(got) != 1 {
		t.Fatalf("the leader answered in an up machine's channel: %q", got)
	}
	r.opt.Fleet = fakeFleet{leads: true, owners: map[string]bool{"100000000000000777": false}}
	r.HandleCommand(thread, fakeResponder{l: l})
	if got := l.all(); len(got) != 2 || !strings.Contains(got[1], "machine m, which is stopped or unreachable") {
		t.Fatalf("the leader's answer in a down machine's thread: %q", got)
	}
}

func TestStatusNamesTheMachine(t *testing.T) {
	r, _, _, l, _ := newRouter(t)
	r.opt.Config.General.Machine = "build-7"
	r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, Name: "status"}, fakeResponder{l: l})
	got := l.all()
	if len(got) == 0 || !strings.Contains(got[len(got)-1], "Machine: build-7") {
		t.Fatalf("status = %q", got)
	}
}

// Another machine's buttons and forms (its instance id in the custom_id)
// reach every daemon sharing the bot; only that machine answers them.
func TestAnotherInstancesComponentsAreLeftAlone(t *testing.T) {
	r, _, _, l, _ := newRouter(t)
	owner := chat.User{ID: owner}
	for _, kind := range []string{"p", "key", "panel", "wt"} {
		id, err := chat.ID{Instance: "inst2", Kind: kind, Args: []string{"home-api", "allow"}}.Encode()
		if err != nil {
			t.Fatal(err)
		}
		r.HandleComponent(l.onDrawn(r, chat.ComponentEvent{Server: "home", ChannelID: channel, User: owner, CustomID: id}), fakeResponder{l: l})
		r.HandleModal(l.submitDrawn(r, chat.ModalEvent{Server: "home", ChannelID: channel, User: owner, CustomID: id}), fakeResponder{l: l})
	}
	r.HandleComponent(l.onDrawn(r, chat.ComponentEvent{Server: "home", ChannelID: channel, User: owner, CustomID: "not ours at all"}), fakeResponder{l: l})
	if got := l.all(); len(got) != 0 {
		t.Fatalf("answered another instance's components: %q", got)
	}
}
