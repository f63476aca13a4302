package fakediscord

import (
	"strconv"
	"testing"
)

// Create Guild Channel with permission_overwrites follows Discord's rules:
// a valid type, only bits the bot has, and the channel is then hidden
// from everyone the overwrites do not let in.
func TestCreateChannelWithOverwrites(t *testing.T) {
	srv := New(t)
	bot := srv.Main()
	auth := "Bot " + bot.Token
	owner, stranger := srv.NewUser("owner"), srv.NewUser("stranger")
	srv.SetBotPermissions(bot, PermInvite|PermManageChannels)
	create := func(ows ...map[string]any) (int, map[string]any) {
		return call(t, srv, auth, "POST", "/guilds/"+bot.GuildID+"/channels", map[string]any{"name": "api", "type": 0, "permission_overwrites": ows})
	}
	srv.InvalidBodiesExpected.Store(true) // the schema refuses this one
	st, body := create(map[string]any{"id": owner.ID, "type": 2, "allow": "1024"})
	rejected(t, "overwrite type 2", st, body, 400, 50035, "")
	srv.InvalidBodiesExpected.Store(false)
	st, body = create(map[string]any{"id": owner.ID, "type": 1, "allow": strconv.FormatInt(permAdministrator, 10)})
	rejected(t, "allowing a bit the bot lacks", st, body, 403, 50013, "")
	st, body = create(map[string]any{"id": owner.ID, "type": 1, "allow": strconv.FormatInt(permManageRoles, 10)})
	rejected(t, "allowing Manage Roles", st, body, 403, 50013, "")

	st, body = create(
		map[string]any{"id": bot.GuildID, "type": 0, "deny": strconv.FormatInt(PermViewChannel, 10)},
		map[string]any{"id": bot.UserID, "type": 1, "allow": strconv.FormatInt(PermInvite, 10)},
		map[string]any{"id": owner.ID, "type": 1, "allow": PermViewChannel | PermSendMessages}) // an integer, as the spec allows
	if st != 201 {
		t.Fatalf("create: %d %v", st, body)
	}
	ch, _ := body["id"].(string)
	if ows, _ := body["permission_overwrites"].([]any); len(ows) != 3 {
		t.Errorf("overwrites in the answer: %v", body["permission_overwrites"])
	}
	if !srv.CanView(bot, ch, owner.ID) || !srv.CanView(bot, ch, bot.UserID) || srv.CanView(bot, ch, stranger.ID) {
		t.Errorf("view: owner %v bot %v stranger %v", srv.CanView(bot, ch, owner.ID), srv.CanView(bot, ch, bot.UserID), srv.CanView(bot, ch, stranger.ID))
	}
	if !srv.CanView(bot, bot.ChannelID, stranger.ID) {
		t.Error("a channel without overwrites must be visible to everyone")
	}
}
