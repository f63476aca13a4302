package discord

import (
	"context"
	"net/url"
	"strconv"
	"testing"

	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
)

// The invite asks for exactly the README's permissions; the bits are
// Discord's (https://discord.com/developers/docs/topics/permissions).
func TestInviteURLHasExactlyTheREADMEPermissions(t *testing.T) {
	const needed = 1<<10 | 1<<11 | 1<<38 | 1<<35 | 1<<34 | 1<<16 | 1<<15 | 1<<6 | 1<<14
	if NeededBits() != needed || needed != 326417632320 {
		t.Fatalf("NeededBits = %d, want %d", NeededBits(), int64(needed))
	}
	const want = needed | 1<<36 // Create Private Threads, for /open
	if InviteBits() != want || want != 395137109056 {
		t.Fatalf("InviteBits = %d, want %d", InviteBits(), int64(want))
	}
	if InviteBits() != fakediscord.PermInvite {
		t.Errorf("the fake's invite permissions %d differ from %d", fakediscord.PermInvite, InviteBits())
	}
	u, err := url.Parse(InviteURL("123"))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if u.Host != "discord.com" || u.Path != "/oauth2/authorize" || q.Get("client_id") != "123" ||
		q.Get("scope") != "bot applications.commands" || q.Get("permissions") != strconv.Itoa(want) {
		t.Errorf("invite URL %s", u)
	}
}

func TestClientReadsWhatSetupNeeds(t *testing.T) {
	srv := fakediscord.New(t)
	bot := srv.Main()
	owner := srv.NewUser("owner")
	srv.SetAppOwner(bot, owner.ID)
	c, err := NewClient(srv.URL, bot.Token)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id, name, err := c.Me(ctx)
	if err != nil || id != bot.UserID || name == "" {
		t.Fatalf("Me: %q %q %v", id, name, err)
	}
	app, err := c.Application(ctx)
	if err != nil || app.ID != bot.UserID || app.OwnerID != owner.ID || !app.MessageContent() {
		t.Fatalf("Application: %+v %v", app, err)
	}
	srv.SetMessageContentIntent(bot, false)
	if app, _ = c.Application(ctx); app.MessageContent() {
		t.Error("intent reported on after it was turned off")
	}
	gs, err := c.Guilds(ctx)
	if err != nil || len(gs) != 1 || gs[0].ID != bot.GuildID {
		t.Fatalf("Guilds: %v %v", gs, err)
	}
	api := srv.AddChannel(bot.GuildID, "api")
	chs, err := c.TextChannels(ctx, bot.GuildID)
	if err != nil || len(chs) != 2 || chs[0].ID != bot.ChannelID || chs[1].ID != api {
		t.Fatalf("TextChannels: %v %v", chs, err)
	}
	if _, err := c.CreateTextChannel(ctx, bot.GuildID, "web", bot.UserID, nil); HTTPStatus(err) != 403 {
		t.Errorf("create without Manage Channels: %v", err)
	}
	srv.DenyBotInChannel(bot, api, fakediscord.PermAddReactions|fakediscord.PermAttachFiles)
	perms, err := c.ChannelPerms(ctx, bot.GuildID)
	if err != nil {
		t.Fatal(err)
	}
	if m := Missing(perms[bot.ChannelID].Perms); len(m) != 0 {
		t.Errorf("general lacks %v", m)
	}
	if m := Missing(perms[api].Perms); len(m) != 2 || m[0] != "Attach Files" || m[1] != "Add Reactions" {
		t.Errorf("api lacks %v, want Attach Files and Add Reactions", m)
	}
	for _, ch := range []string{bot.ChannelID, api} {
		if perms[ch].Perms != srv.BotPermissions(bot, ch) {
			t.Errorf("channel %s: client computed %b, the fake %b", ch, perms[ch].Perms, srv.BotPermissions(bot, ch))
		}
	}
	srv.LeaveGuild(bot)
	if gs, err := c.Guilds(ctx); err != nil || len(gs) != 0 {
		t.Errorf("Guilds after leaving: %v %v", gs, err)
	}
}
