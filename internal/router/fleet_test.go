package router

import (
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/chat"
)

type fakeFleet bool

func (f fakeFleet) Leads(string) bool { return bool(f) }

// Several daemons share a bot and all see every command: a daemon is
// silent in channels it does not map, unless it leads the server's panel
// channel, so that exactly one says the channel is no project's.
func TestUnmappedChannelCommandsAreAnsweredByTheLeaderOnly(t *testing.T) {
	r, _, _, l, _ := newRouter(t)
	owner := chat.User{ID: owner}
	unmapped := chat.CommandEvent{Server: "home", ChannelID: "100000000000000777", User: owner, Name: "status"}

	r.HandleCommand(unmapped, fakeResponder{l}) // no panel channel: nobody answers
	if got := l.all(); len(got) != 0 {
		t.Fatalf("a daemon without a panel channel answered: %q", got)
	}
	r.opt.Config.Servers[0].GeneralChannelID = "100000000000000888"
	r.opt.Fleet = fakeFleet(false)
	r.HandleCommand(unmapped, fakeResponder{l})
	if got := l.all(); len(got) != 0 {
		t.Fatalf("a daemon that does not lead answered: %q", got)
	}
	r.opt.Fleet = fakeFleet(true)
	r.HandleCommand(unmapped, fakeResponder{l})
	if got := l.all(); len(got) != 1 || !strings.Contains(got[0], "not a ccbridge project channel") {
		t.Fatalf("the leader's answer: %q", got)
	}
}

func TestStatusNamesTheMachine(t *testing.T) {
	r, _, _, l, _ := newRouter(t)
	r.opt.Config.General.Machine = "build-7"
	r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, Name: "status"}, fakeResponder{l})
	got := l.all()
	if len(got) == 0 || !strings.Contains(got[len(got)-1], "Machine: build-7") {
		t.Fatalf("status = %q", got)
	}
}
