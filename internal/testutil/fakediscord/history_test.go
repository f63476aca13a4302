package fakediscord

import (
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/ccbridge/ccbridge/internal/discord"
)

// restSession is a discordgo session for REST calls only.
func restSession(t *testing.T, srv *Server, bot *Bot) *discordgo.Session {
	t.Helper()
	dg, err := discord.NewSession(srv.URL, bot.Token)
	if err != nil {
		t.Fatal(err)
	}
	return dg
}

func contentsOf(list []map[string]any) []any {
	var out []any
	for _, m := range list {
		out = append(out, m["content"])
	}
	return out
}

// TestHistoryAfterPagesOldestFirstEachNewestFirst checks the paging a bot
// catching up relies on: after gives the messages right after the id, the
// page sorted newest first, so the next page starts after its first entry.
func TestHistoryAfterPagesOldestFirstEachNewestFirst(t *testing.T) {
	srv := New(t)
	bot := srv.Main()
	auth := "Bot " + bot.Token
	owner := srv.NewUser("owner")
	var ids []string
	for _, text := range []string{"m1", "m2", "m3", "m4", "m5"} {
		ids = append(ids, srv.Post(bot.ChannelID, owner, text).ID)
	}
	base := "/channels/" + bot.ChannelID + "/messages"
	st, list, _ := callList(t, srv, auth, "GET", base+"?limit=2&after="+ids[0], nil)
	if got := contentsOf(list); st != 200 || len(got) != 2 || got[0] != "m3" || got[1] != "m2" {
		t.Fatalf("after m1, limit 2: %d %v, want [m3 m2]", st, got)
	}
	st, list, _ = callList(t, srv, auth, "GET", base+"?limit=2&after="+list[0]["id"].(string), nil)
	if got := contentsOf(list); st != 200 || len(got) != 2 || got[0] != "m5" || got[1] != "m4" {
		t.Fatalf("after m3, limit 2: %d %v, want [m5 m4]", st, got)
	}
	if st, list, _ = callList(t, srv, auth, "GET", base+"?after="+ids[4], nil); st != 200 || len(list) != 0 {
		t.Fatalf("after the newest: %d %v, want nothing", st, contentsOf(list))
	}
	if st, list, _ = callList(t, srv, auth, "GET", base+"?after=0", nil); st != 200 || len(list) != 5 || list[0]["content"] != "m5" {
		t.Fatalf("after 0: %d %v, want all, newest first", st, contentsOf(list))
	}
	st, list, _ = callList(t, srv, auth, "GET", base+"?limit=3&around="+ids[2], nil)
	if got := contentsOf(list); st != 200 || len(got) != 3 || got[0] != "m4" || got[2] != "m2" {
		t.Fatalf("around m3, limit 3: %d %v, want [m4 m3 m2]", st, got)
	}
	// Only one of them applies: after, when after and before are both given.
	st, list, _ = callList(t, srv, auth, "GET", base+"?limit=1&after="+ids[0]+"&before="+ids[4], nil)
	if got := contentsOf(list); st != 200 || len(got) != 1 || got[0] != "m2" {
		t.Fatalf("after and before: %d %v, want [m2]", st, got)
	}

	// The same through discordgo, as the bridge calls it.
	dg := restSession(t, srv, bot)
	msgs, err := dg.ChannelMessages(bot.ChannelID, 100, "", ids[2], "")
	if err != nil || len(msgs) != 2 || msgs[0].Content != "m5" || msgs[1].Content != "m4" {
		t.Fatalf("discordgo after m3: %v %v", err, msgs)
	}
}

func TestHistoryRejectsBadParameters(t *testing.T) {
	srv := New(t)
	bot := srv.Main()
	auth := "Bot " + bot.Token
	base := "/channels/" + bot.ChannelID + "/messages"
	for _, tc := range []struct{ query, path string }{
		{"after=abc", "after"}, {"before=-1", "before"}, {"around=1.5", "around"}, {"after=", "after"},
		{"after=01", "after"}, {"limit=0", "limit"}, {"limit=101", "limit"}, {"limit=ten", "limit"},
	} {
		st, _, obj := callList(t, srv, auth, "GET", base+"?"+tc.query, nil)
		rejected(t, tc.query, st, obj, 400, 50035, tc.path)
	}
}

// TestHistoryInThreadTakesParentPermissions: a thread's history needs View
// Channel on its parent; without Read Message History it is empty.
func TestHistoryInThreadTakesParentPermissions(t *testing.T) {
	srv := New(t)
	bot := srv.Main()
	auth := "Bot " + bot.Token
	owner := srv.NewUser("owner")
	th := srv.StartThread(bot.ChannelID, "work", owner)
	srv.Post(th, owner, "in the thread")
	base := "/channels/" + th + "/messages"
	if st, list, _ := callList(t, srv, auth, "GET", base, nil); st != 200 || len(list) == 0 || list[0]["content"] != "in the thread" {
		t.Fatalf("thread history: %d %v", st, contentsOf(list))
	}
	srv.DenyBotInChannel(bot, bot.ChannelID, PermReadHistory)
	if st, list, _ := callList(t, srv, auth, "GET", base, nil); st != 200 || len(list) != 0 {
		t.Errorf("thread without Read Message History on its parent: %d %v, want 200 and nothing", st, contentsOf(list))
	}
	srv.DenyBotInChannel(bot, bot.ChannelID, PermViewChannel)
	st, _, obj := callList(t, srv, auth, "GET", base, nil)
	rejected(t, "thread without View Channel on its parent", st, obj, 403, 50001, "")
}

// TestHistoryShowsReactionsAndBackdatedTime: a message read back carries
// the bot's own reactions (me) and its creation time, which Backdate moves.
func TestHistoryShowsReactionsAndBackdatedTime(t *testing.T) {
	srv := New(t)
	bot := srv.Main()
	owner := srv.NewUser("owner")
	plain := srv.Post(bot.ChannelID, owner, "plain")
	marked := srv.Post(bot.ChannelID, owner, "marked")
	dg := restSession(t, srv, bot)
	if err := dg.MessageReactionAdd(bot.ChannelID, marked.ID, "✅"); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-20 * time.Minute).UTC().Truncate(time.Millisecond)
	srv.Backdate(plain.ID, old)
	msgs, err := dg.ChannelMessages(bot.ChannelID, 10, "", "", "")
	if err != nil || len(msgs) != 2 {
		t.Fatalf("%v %v", err, msgs)
	}
	byID := map[string]*discordgo.Message{msgs[0].ID: msgs[0], msgs[1].ID: msgs[1]}
	if got := byID[plain.ID]; !got.Timestamp.Equal(old) || len(got.Reactions) != 0 {
		t.Errorf("backdated message: timestamp %v (want %v), reactions %v", got.Timestamp, old, got.Reactions)
	}
	got := byID[marked.ID]
	if len(got.Reactions) != 1 || got.Reactions[0].Emoji.Name != "✅" || !got.Reactions[0].Me || got.Reactions[0].Count != 1 {
		t.Errorf("reactions = %+v, want the bot's ✅", got.Reactions)
	}
	if time.Since(got.Timestamp) > time.Minute {
		t.Errorf("a message not backdated has timestamp %v", got.Timestamp)
	}
}

func TestHistoryDefaultLimitIs50(t *testing.T) {
	srv := New(t)
	bot := srv.Main()
	owner := srv.NewUser("owner")
	for range 60 {
		srv.Post(bot.ChannelID, owner, "x")
	}
	if st, list, _ := callList(t, srv, "Bot "+bot.Token, "GET", "/channels/"+bot.ChannelID+"/messages", nil); st != 200 || len(list) != 50 {
		t.Fatalf("no limit: %d, %d messages, want 50", st, len(list))
	}
	if st, list, _ := callList(t, srv, "Bot "+bot.Token, "GET", "/channels/"+bot.ChannelID+"/messages?limit=100", nil); st != 200 || len(list) != 60 {
		t.Fatalf("limit 100: %d, %d messages, want 60", st, len(list))
	}
}
