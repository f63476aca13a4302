package fakediscord

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"
)

func TestAutocompleteAndIntegerOptionRules(t *testing.T) {
	srv := New(t)
	srv.InvalidBodiesExpected.Store(true) // these bodies are meant to be refused
	bot := srv.Main()
	auth := "Bot " + bot.Token
	path := "/applications/" + bot.UserID + "/guilds/" + bot.GuildID + "/commands"
	intOpt := func(name string, kv ...any) map[string]any {
		return with(map[string]any{"name": name, "description": "the " + name, "type": 4}, kv...)
	}
	choice := map[string]any{"name": "a", "value": "a"}
	for _, c := range []struct {
		name string
		cmds []any
		path string
	}{
		{"autocomplete with choices", []any{cmd("a", strOpt("x", false, "autocomplete", true, "choices", []any{choice}))}, "0.options.0.autocomplete"},
		{"autocomplete on a boolean", []any{cmd("a", with(strOpt("x", false), "type", 5, "autocomplete", true))}, "0.options.0.autocomplete"},
		{"min_value on a string", []any{cmd("a", strOpt("x", false, "min_value", 1))}, "0.options.0.min_value"},
		{"fractional bound of an integer", []any{cmd("a", intOpt("n", "max_value", 1.5))}, "0.options.0.max_value"},
		{"min above max", []any{cmd("a", intOpt("n", "min_value", 5, "max_value", 1))}, "0.options.0.min_value"},
	} {
		st, body := call(t, srv, auth, "PUT", path, c.cmds)
		rejected(t, c.name, st, body, 400, 50035, c.path)
	}
	st, body := call(t, srv, auth, "PUT", path, []any{cmd("pick", strOpt("name", true, "autocomplete", true), intOpt("count", "min_value", 1, "max_value", 50))})
	if st != 200 {
		t.Fatalf("valid command: %d %v", st, body)
	}

	owner := srv.NewUser("owner")
	its := make(chan *discordgo.InteractionCreate, 10)
	dg := connect(t, srv, bot, func(dg *discordgo.Session) {
		dg.AddHandler(func(_ *discordgo.Session, i *discordgo.InteractionCreate) { its <- i })
	})
	ac := srv.Autocomplete(bot.ChannelID, "pick", owner, map[string]any{"count": 3}, "name", "so")
	ic := recv(t, its)
	if ic.Type != discordgo.InteractionApplicationCommandAutocomplete {
		t.Fatalf("interaction type %d", ic.Type)
	}
	var focused string
	for _, o := range ic.ApplicationCommandData().Options {
		if o.Focused {
			focused = o.Name + "=" + o.StringValue()
		}
	}
	if focused != "name=so" {
		t.Fatalf("focused option %q", focused)
	}
	suggest := func(typ discordgo.InteractionResponseType, n int, name string) error {
		var cs []*discordgo.ApplicationCommandOptionChoice
		for i := range n {
			cs = append(cs, &discordgo.ApplicationCommandOptionChoice{Name: fmt.Sprint(name, i), Value: fmt.Sprint(i)})
		}
		return dg.InteractionRespond(ic.Interaction, &discordgo.InteractionResponse{Type: typ, Data: &discordgo.InteractionResponseData{Choices: cs}})
	}
	for _, bad := range []struct {
		what string
		err  error
	}{
		{"a message answer", suggest(discordgo.InteractionResponseChannelMessageWithSource, 1, "x")},
		{"26 suggestions", suggest(discordgo.InteractionApplicationCommandAutocompleteResult, 26, "x")},
		{"a name of 101", suggest(discordgo.InteractionApplicationCommandAutocompleteResult, 1, strings.Repeat("n", 101))},
	} {
		if bad.err == nil || !strings.Contains(bad.err.Error(), "50035") {
			t.Errorf("%s: %v", bad.what, bad.err)
		}
	}
	if err := suggest(discordgo.InteractionApplicationCommandAutocompleteResult, 25, "sonnet"); err != nil {
		t.Fatal(err)
	}
	if got := srv.WaitResponse(ac, wait).Choices(); len(got) != 25 || got[0]["name"] != "sonnet0" {
		t.Fatalf("choices %v", got)
	}

	// A command's interaction is not answered with suggestions.
	run := srv.Command(bot.ChannelID, "pick", owner, map[string]any{"name": "x", "count": 50})
	ic = recv(t, its)
	if v := ic.ApplicationCommandData().Options[0]; v.Name != "count" || v.Type != discordgo.ApplicationCommandOptionInteger || v.IntValue() != 50 {
		t.Fatalf("integer option %+v", v)
	}
	if err := suggest(discordgo.InteractionApplicationCommandAutocompleteResult, 1, "x"); err == nil {
		t.Error("suggestions answered a command")
	}
	_ = run
}
