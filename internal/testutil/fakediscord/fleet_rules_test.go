package fakediscord

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

func callList(t *testing.T, srv *Server, token, method, path string, body any) (int, []map[string]any, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, srv.URL+"/api/v10"+path, rd)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var list []map[string]any
	var obj map[string]any
	if json.Unmarshal(raw, &list) != nil {
		_ = json.Unmarshal(raw, &obj)
	}
	return resp.StatusCode, list, obj
}

func TestChannelHistoryRules(t *testing.T) {
	srv := New(t)
	bot := srv.Main()
	auth := "Bot " + bot.Token
	owner := srv.NewUser("owner")
	for _, text := range []string{"one", "two", "three"} {
		srv.Post(bot.ChannelID, owner, text)
	}
	st, list, _ := callList(t, srv, auth, "GET", "/channels/"+bot.ChannelID+"/messages?limit=2", nil)
	if st != 200 || len(list) != 2 || list[0]["content"] != "three" || list[1]["content"] != "two" {
		t.Fatalf("newest first, limit 2: %d %v", st, list)
	}
	st, list, _ = callList(t, srv, auth, "GET", "/channels/"+bot.ChannelID+"/messages?before="+list[1]["id"].(string), nil)
	if st != 200 || len(list) != 1 || list[0]["content"] != "one" {
		t.Fatalf("before: %d %v", st, list)
	}
	for _, bad := range []string{"0", "101", "x"} {
		st, _, obj := callList(t, srv, auth, "GET", "/channels/"+bot.ChannelID+"/messages?limit="+bad, nil)
		rejected(t, "limit "+bad, st, obj, 400, 50035, "limit")
	}
	other := srv.NewBot("other")
	st, _, obj := callList(t, srv, auth, "GET", "/channels/"+other.ChannelID+"/messages", nil)
	rejected(t, "another guild's channel", st, obj, 403, 50001, "")
	st, _, obj = callList(t, srv, auth, "GET", "/channels/999/messages", nil)
	rejected(t, "unknown channel", st, obj, 404, 10003, "")
	one := srv.Post(bot.ChannelID, owner, "four")
	st, _, obj = callList(t, srv, auth, "GET", "/channels/"+bot.ChannelID+"/messages/"+one.ID, nil)
	if st != 200 || obj["content"] != "four" {
		t.Fatalf("get one message: %d %v", st, obj)
	}
	srv.DenyBotInChannel(bot, bot.ChannelID, PermReadHistory)
	st, _, obj = callList(t, srv, auth, "GET", "/channels/"+bot.ChannelID+"/messages/"+one.ID, nil)
	rejected(t, "one message without Read Message History", st, obj, 403, 50013, "")
	if st, list, _ = callList(t, srv, auth, "GET", "/channels/"+bot.ChannelID+"/messages", nil); st != 200 || len(list) != 0 {
		t.Errorf("without Read Message History: %d %v, want 200 and nothing", st, list)
	}
	srv.DenyBotInChannel(bot, bot.ChannelID, PermViewChannel)
	st, _, obj = callList(t, srv, auth, "GET", "/channels/"+bot.ChannelID+"/messages", nil)
	rejected(t, "without View Channel", st, obj, 403, 50001, "")
	st, _, obj = callList(t, srv, auth, "GET", "/channels/"+bot.ChannelID+"/messages/"+one.ID, nil)
	rejected(t, "one message without View Channel", st, obj, 403, 50001, "")
}

func TestCommandUpsertRules(t *testing.T) {
	srv := New(t)
	bot := srv.Main()
	auth := "Bot " + bot.Token
	base := "/applications/" + bot.UserID + "/guilds/" + bot.GuildID + "/commands"
	st, list, _ := callList(t, srv, auth, "GET", base, nil)
	if st != 200 || len(list) != 0 {
		t.Fatalf("no commands yet: %d %v", st, list)
	}
	st, _, first := callList(t, srv, auth, "POST", base, map[string]any{"name": "status", "description": "a"})
	if st != 201 {
		t.Fatalf("create: %d %v", st, first)
	}
	st, _, second := callList(t, srv, auth, "POST", base, map[string]any{"name": "status", "description": "b"})
	if st != 200 || second["id"] != first["id"] || second["description"] != "b" {
		t.Fatalf("overwrite by name: %d %v (first %v)", st, second, first)
	}
	callList(t, srv, auth, "POST", base, map[string]any{"name": "stop", "description": "c"})
	if cmds := srv.Commands(bot.GuildID); len(cmds) != 2 {
		t.Errorf("commands: %v", cmds)
	}
	st, _, obj := callList(t, srv, auth, "POST", base, map[string]any{"name": "Bad Name", "description": "c"})
	rejected(t, "bad name", st, obj, 400, 50035, "")
	other := srv.NewBot("other")
	st, _, obj = callList(t, srv, auth, "GET", "/applications/"+bot.UserID+"/guilds/"+other.GuildID+"/commands", nil)
	rejected(t, "another guild", st, obj, 403, 50001, "")
	st, _, obj = callList(t, srv, auth, "GET", "/applications/"+other.UserID+"/guilds/"+bot.GuildID+"/commands", nil)
	rejected(t, "another application", st, obj, 403, 20012, "")
}
