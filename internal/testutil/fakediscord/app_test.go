package fakediscord

import (
	"testing"
)

func TestApplicationAndGuildRules(t *testing.T) {
	srv := New(t)
	srv.InvalidBodiesExpected.Store(true) // these bodies are meant to be refused
	bot := srv.Main()
	auth := "Bot " + bot.Token
	owner := srv.NewUser("owner")
	srv.SetAppOwner(bot, owner.ID)

	st, app := call(t, srv, auth, "GET", "/oauth2/applications/@me", nil)
	if st != 200 || app["id"] != bot.UserID || app["owner"].(map[string]any)["id"] != owner.ID || int(app["flags"].(float64))&AppFlagMessageContentLimited == 0 {
		t.Fatalf("application: %d %v", st, app)
	}
	srv.SetMessageContentIntent(bot, false)
	if _, app = call(t, srv, auth, "GET", "/oauth2/applications/@me", nil); int(app["flags"].(float64)) != 0 || !bot.DenyMessageContent {
		t.Errorf("intent off: flags %v, gateway deny %v", app["flags"], bot.DenyMessageContent)
	}

	srv.LeaveGuild(bot)
	if st, _ := call(t, srv, auth, "GET", "/users/@me/guilds", nil); st != 200 {
		t.Fatalf("guilds: %d", st)
	}
	st, body := call(t, srv, auth, "GET", "/guilds/"+bot.GuildID+"/channels", nil)
	rejected(t, "channels of a guild not joined", st, body, 403, 50001, "")
	srv.JoinGuild(bot)
	st, body = call(t, srv, auth, "GET", "/guilds/"+bot.GuildID, nil)
	accepted(t, "guild", st, body)
	other := srv.NewBot("other")
	st, body = call(t, srv, auth, "GET", "/guilds/"+other.GuildID+"/channels", nil)
	rejected(t, "another bot's guild", st, body, 403, 50001, "")

	// Creating a channel needs Manage Channels, which the invite does not grant.
	st, body = call(t, srv, auth, "POST", "/guilds/"+bot.GuildID+"/channels", map[string]any{"name": "api", "type": 0})
	rejected(t, "create without Manage Channels", st, body, 403, 50013, "")
	srv.SetBotPermissions(bot, PermInvite|PermManageChannels)
	st, body = call(t, srv, auth, "POST", "/guilds/"+bot.GuildID+"/channels", map[string]any{"name": "", "type": 0})
	rejected(t, "empty name", st, body, 400, 50035, "name")
	st, body = call(t, srv, auth, "POST", "/guilds/"+bot.GuildID+"/channels", map[string]any{"name": "My API", "type": 0})
	if st != 201 || body["name"] != "my-api" {
		t.Errorf("create: %d %v", st, body)
	}
	st, body = call(t, srv, auth, "GET", "/guilds/"+bot.GuildID+"/members/"+owner.ID, nil)
	rejected(t, "unknown member", st, body, 404, 10007, "")
}

func TestBotPermissionsFollowOverwrites(t *testing.T) {
	srv := New(t)
	bot := srv.Main()
	ch := bot.ChannelID
	if got := srv.BotPermissions(bot, ch); got&PermInvite != PermInvite {
		t.Fatalf("default permissions %b lack the invite's %b", got, PermInvite)
	}
	// A private channel: @everyone denied viewing hides it even from roles
	// that may view at the guild level, until a role overwrite allows it.
	srv.SetOverwrite(bot, ch, bot.GuildID, OverwriteRole, 0, PermViewChannel)
	if srv.BotPermissions(bot, ch)&PermViewChannel != 0 {
		t.Error("@everyone deny ignored")
	}
	srv.mu.Lock()
	role := srv.app(bot).botRole
	srv.mu.Unlock()
	srv.SetOverwrite(bot, ch, role, OverwriteRole, PermViewChannel, 0)
	if srv.BotPermissions(bot, ch)&PermViewChannel == 0 {
		t.Error("a role overwrite allowing View Channels must win over the @everyone deny")
	}
	srv.SetBotPermissions(bot, PermInvite)
	srv.DenyBotInChannel(bot, ch, PermAttachFiles)
	if p := srv.BotPermissions(bot, ch); p&PermAttachFiles != 0 || p&PermSendMessages == 0 {
		t.Errorf("member deny of Attach Files: %b", p)
	}
	srv.SetBotPermissions(bot, permAdministrator)
	if p := srv.BotPermissions(bot, ch); p&PermAttachFiles == 0 {
		t.Error("Administrator overrides overwrites")
	}
}

// A message create needs Send Messages (Send Messages in Threads in a
// thread, whose parent's overwrites apply) and, with files, Attach Files:
// Discord answers 403 50013 otherwise, 403 50001 without View Channel.
func TestMessageCreateNeedsPermissions(t *testing.T) {
	srv := New(t)
	bot := srv.Main()
	auth := "Bot " + bot.Token
	owner := srv.NewUser("owner")
	th := srv.StartThread(bot.ChannelID, "t", owner)
	file := map[string][]byte{"files[0]": []byte("x")}
	srv.DenyBotInChannel(bot, bot.ChannelID, PermAttachFiles)
	st, body := upload(t, srv, auth, bot.ChannelID, `{"content":"with a file"}`, file)
	rejected(t, "a file without Attach Files", st, body, 403, 50013, "")
	if st, body := call(t, srv, auth, "POST", "/channels/"+bot.ChannelID+"/messages", map[string]any{"content": "text"}); st != 200 {
		t.Fatalf("text without Attach Files: %d %v", st, body)
	}
	srv.DenyBotInChannel(bot, bot.ChannelID, PermSendInThreads)
	st, body = call(t, srv, auth, "POST", "/channels/"+th+"/messages", map[string]any{"content": "in the thread"})
	rejected(t, "a thread without Send Messages in Threads", st, body, 403, 50013, "")
	srv.DenyBotInChannel(bot, bot.ChannelID, PermSendMessages)
	st, body = call(t, srv, auth, "POST", "/channels/"+bot.ChannelID+"/messages", map[string]any{"content": "text"})
	rejected(t, "no Send Messages", st, body, 403, 50013, "")
	srv.DenyBotInChannel(bot, bot.ChannelID, PermViewChannel)
	st, body = call(t, srv, auth, "POST", "/channels/"+bot.ChannelID+"/messages", map[string]any{"content": "text"})
	rejected(t, "no View Channel", st, body, 403, 50001, "")
}
