package gateway

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/discord"
	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
	"github.com/ccbridge/ccbridge/internal/testutil/testenv"
)

// Several daemons share one bot: registering slash commands keeps the
// commands that are not ours, rewrites only ours that differ, and a second
// daemon (or a restart) with the same set writes nothing.
func TestCommandRegistrationConverges(t *testing.T) {
	srv := fakediscord.New(t)
	bot := srv.Main()
	dg, err := discord.NewSession(srv.URL, bot.Token)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dg.ApplicationCommandBulkOverwrite(bot.UserID, bot.GuildID, []*discordgo.ApplicationCommand{
		{Name: "other", Description: "another app version's command"},
		{Name: "status", Description: "an older description"},
	}); err != nil {
		t.Fatal(err)
	}
	specs := []chat.CommandSpec{
		{Name: "status", Description: "Show the state"},
		{Name: "mode", Description: "Change the mode", Options: []chat.OptionSpec{{Name: "mode", Description: "mode", Required: true, Choices: []chat.Choice{{Name: "A", Value: "a"}, {Name: "B", Value: "b"}}}}},
	}
	t.Setenv("CCBRIDGE_GW_TEST_TOKEN", bot.Token)
	open := func() {
		t.Helper()
		var logs testenv.SyncBuffer
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		b, err := Open(ctx, slog.New(slog.NewTextHandler(&logs, nil)), srv.URL, config.Server{Name: "home", TokenEnv: "CCBRIDGE_GW_TEST_TOKEN", GuildID: bot.GuildID}, newRecorder(), specs)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = b.Close() })
		deadline := time.Now().Add(5 * time.Second)
		for !strings.Contains(logs.String(), "slash commands registered") {
			if time.Now().After(deadline) {
				t.Fatalf("commands never registered:\n%s", logs.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	writes := func() int {
		n := 0
		for _, c := range srv.Calls() {
			if strings.Contains(c.Path, "/commands") && c.Method != "GET" {
				n++
			}
		}
		return n
	}
	before := writes()
	open()
	if n := writes() - before; n != 2 {
		t.Errorf("first daemon wrote %d commands, want 2 (status changed, mode new)", n)
	}
	got := map[string]string{}
	for _, c := range srv.Commands(bot.GuildID) {
		got[c["name"].(string)] = c["description"].(string)
	}
	if got["other"] == "" || got["status"] != "Show the state" || got["mode"] == "" || len(got) != 3 {
		t.Errorf("commands after the first daemon: %v", got)
	}
	before = writes()
	open() // a second machine, or a restart
	if n := writes() - before; n != 0 {
		t.Errorf("a daemon with the same set wrote %d commands, want none", n)
	}
	if n := len(srv.Commands(bot.GuildID)); n != 3 {
		t.Errorf("%d commands after the second daemon, want 3", n)
	}
	// A newer version changes a description: only that command is written.
	specs[1].Description = "Change the permission mode"
	before = writes()
	open()
	if n := writes() - before; n != 1 {
		t.Errorf("a changed command: %d writes, want 1", n)
	}
	if n := len(srv.Commands(bot.GuildID)); n != 3 {
		t.Errorf("%d commands after an update, want 3", n)
	}
}

// In a guild holding only ccbridge's commands (or none), the set is put
// in place in one call, so that it is complete at once.
func TestCommandsOfAFreshGuildAreWrittenAtOnce(t *testing.T) {
	srv := fakediscord.New(t)
	openBot(t, srv, newRecorder())
	n := 0
	for _, c := range srv.Calls() {
		if strings.Contains(c.Path, "/commands") && c.Method != "GET" {
			n++
			if c.Method != "PUT" {
				t.Errorf("%s %s, want one PUT", c.Method, c.Path)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d writes, want 1", n)
	}
}
