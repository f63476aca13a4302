package fakediscord

import (
	"bytes"
	"net/http"
	"slices"
	"strings"
	"testing"
)

func TestAllowedMentionsRules(t *testing.T) {
	srv := New(t)
	srv.InvalidBodiesExpected.Store(true) // these bodies are meant to be refused
	bot := srv.Main()
	u := srv.NewUser("u")
	post := func(body string) (int, string) {
		req, _ := http.NewRequest("POST", srv.URL+"/api/v10/channels/"+bot.ChannelID+"/messages", bytes.NewBufferString(body))
		req.Header.Set("Authorization", "Bot "+bot.Token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return resp.StatusCode, b.String()
	}
	if code, body := post(`{"content":"<@` + u.ID + `>","allowed_mentions":{"parse":["users"],"users":["` + u.ID + `"]}}`); code != 400 || !strings.Contains(body, "MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE") || !strings.Contains(body, "50035") {
		t.Errorf("parse users + users list: %d %s", code, body)
	}
	if code, body := post(`{"content":"x","allowed_mentions":{"parse":["people"]}}`); code != 400 || !strings.Contains(body, "50035") {
		t.Errorf("bad parse value: %d %s", code, body)
	}
	code, body := post(`{"content":"<@` + u.ID + `> hi","allowed_mentions":{"parse":[],"users":["` + u.ID + `"]}}`)
	if code != 200 {
		t.Fatalf("valid mention refused: %d %s", code, body)
	}
	msgs := srv.Messages(bot.ChannelID)
	if got := srv.Mentioned(msgs[len(msgs)-1].ID); !slices.Equal(got, []string{u.ID}) {
		t.Errorf("mentioned %v", got)
	}
}
