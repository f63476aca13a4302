package router

import (
	"slices"
	"strings"
	"testing"

	"github.com/ccbridge/ccbridge/internal/chat"
)

func command(name string) chat.CommandSpec {
	for _, c := range Commands() {
		if c.Name == name {
			return c
		}
	}
	return chat.CommandSpec{}
}

// /mode offers only the modes a running session can switch to, with
// readable labels; a mode it does not offer (an old client, a crafted
// interaction) is refused without touching the session.
func TestModeOffersOnlySwitchableModes(t *testing.T) {
	var values []string
	for _, c := range command("mode").Options[0].Choices {
		values = append(values, c.Value)
		if c.Name == c.Value {
			t.Errorf("choice %q has no readable label", c.Value)
		}
	}
	if !slices.Equal(values, []string{"default", "acceptEdits", "plan", "auto"}) {
		t.Fatalf("/mode offers %q", values)
	}
	r, _, _, l, _ := newRouter(t)
	r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, Name: "mode", Options: map[string]string{"mode": "bypassPermissions"}}, fakeResponder{l: l})
	got := l.all()
	if len(got) != 2 || !strings.Contains(got[1], "cannot be switched to in a running session") {
		t.Fatalf("ops = %q", got)
	}
}

// /model suggests models as the owner types: the aliases matching the
// text, at most Discord's 25; nothing for anyone else; no answer at all
// in a channel this daemon does not map (another machine's).
func TestModelSuggestsAsTheOwnerTypes(t *testing.T) {
	if o := command("model").Options[0]; !o.Autocomplete || len(o.Choices) != 0 {
		t.Fatalf("/model name option %+v", o)
	}
	r, _, _, _, _ := newRouter(t)
	typed := func(server, ch, user, text string) []chat.Choice {
		return r.HandleAutocomplete(chat.AutocompleteEvent{Server: server, ChannelID: ch, User: chat.User{ID: user}, Command: "model", Option: "name", Value: text})
	}
	var all []string
	for _, c := range typed("home", channel, owner, "") {
		all = append(all, c.Value)
	}
	// The pinned CLI's aliases (its binary's list, fidelity review 3 §12),
	// and default.
	cli := []string{"sonnet", "opus", "haiku", "fable", "best", "sonnet[1m]", "opus[1m]", "fable[1m]", "opusplan", "default"}
	if !slices.Equal(all, cli) || len(all) > chat.MaxChoices {
		t.Fatalf("suggestions %q, want %q", all, cli)
	}
	var op []string
	for _, c := range typed("home", channel, owner, "OP") {
		op = append(op, c.Value)
	}
	if !slices.Equal(op, []string{"opus", "opus[1m]", "opusplan"}) {
		t.Errorf("for OP: %q", op)
	}
	if got := typed("home", channel, "666", "s"); got == nil || len(got) != 0 {
		t.Errorf("a stranger got %+v", got)
	}
	if got := typed("home", "999", owner, "s"); got != nil {
		t.Errorf("an unmapped channel got %+v", got)
	}
}

// /help lists every command ccbridge registers, with its options.
func TestHelpListsEveryCommand(t *testing.T) {
	r, _, _, l, _ := newRouter(t)
	var reply chat.Reply
	r.HandleCommand(chat.CommandEvent{Server: "home", ChannelID: channel, User: chat.User{ID: owner}, Name: "help"}, drawn{fakeResponder{l: l}, &reply})
	for _, c := range Commands() {
		if !strings.Contains(reply.Content, "`/"+c.Name+"`") {
			t.Errorf("/help lacks /%s:\n%s", c.Name, reply.Content)
		}
	}
	if !strings.Contains(reply.Content, "`/thread` `name` `[prompt]`") {
		t.Errorf("/help does not show options:\n%s", reply.Content)
	}
	if len([]rune(reply.Content)) > chat.Limit {
		t.Errorf("/help has %d characters", len([]rune(reply.Content)))
	}
}

// /audit count is a whole number from 1 to 50; every description fits a
// phone's picker.
func TestCommandOptionsAndDescriptions(t *testing.T) {
	if o := command("audit").Options[0]; !o.Integer || o.MinValue != 1 || o.MaxValue != 50 {
		t.Errorf("/audit count %+v", o)
	}
	for _, c := range Commands() {
		if n := len([]rune(c.Description)); n > 52 {
			t.Errorf("/%s: a description of %d characters is cut on a phone", c.Name, n)
		}
	}
}
