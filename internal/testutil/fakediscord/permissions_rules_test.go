package fakediscord

import "testing"

// default_member_permissions is a permission bit set, as a decimal string
// (Discord's docs, discordgo) or an integer (the OpenAPI schema), or null;
// anything else is refused as Discord refuses it (the OpenAPI check in
// schema.go does this).
func TestCommandDefaultMemberPermissions(t *testing.T) {
	srv := New(t)
	bot := srv.Main()
	auth := "Bot " + bot.Token
	base := "/applications/" + bot.UserID + "/guilds/" + bot.GuildID + "/commands"
	for _, ok := range []any{"0", "8", float64(32), nil} {
		if st, _, obj := callList(t, srv, auth, "POST", base, map[string]any{"name": "status", "description": "a", "default_member_permissions": ok}); st != 200 && st != 201 {
			t.Errorf("%v refused: %d %v", ok, st, obj)
		}
	}
	srv.InvalidBodiesExpected.Store(true)
	for _, bad := range []any{"admins", "-1", float64(1 << 55), true} {
		st, _, obj := callList(t, srv, auth, "POST", base, map[string]any{"name": "status", "description": "a", "default_member_permissions": bad})
		rejected(t, "default_member_permissions", st, obj, 400, 50035, "")
	}
	srv.InvalidBodiesExpected.Store(false)
	if cmds := srv.Commands(bot.GuildID); len(cmds) != 1 || cmds[0]["default_member_permissions"] != nil {
		t.Errorf("commands: %v", cmds)
	}
}
