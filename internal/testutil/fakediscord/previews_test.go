package fakediscord

import (
	"testing"
	"time"
)

// Discord previews a link in a bot's message a moment after it is posted
// or its text edited, unless the message suppresses embeds (flag 1<<2),
// which a create or an edit may set; links in code or <brackets> are not
// previewed.
func TestLinkPreviewsFollowDiscordsRule(t *testing.T) {
	srv := New(t)
	bot := srv.Main()
	auth := "Bot " + bot.Token
	path := "/channels/" + bot.ChannelID + "/messages"
	post := func(body map[string]any) string {
		t.Helper()
		st, b := call(t, srv, auth, "POST", path, body)
		accepted(t, "a message", st, b)
		return b["id"].(string)
	}
	embeds := func(id string) int {
		t.Helper()
		st, b := call(t, srv, auth, "GET", path+"/"+id, nil)
		accepted(t, "a read", st, b)
		return len(b["embeds"].([]any))
	}
	linked := post(map[string]any{"content": "The plan cites https://docs.example/guide."})
	suppressed := post(map[string]any{"content": "Approve? https://docs.example/guide", "flags": 4})
	coded := post(map[string]any{"content": "Run `curl https://x.example` or\n```\ncurl https://y.example\n```\nsee <https://z.example>"})
	edited := post(map[string]any{"content": "no link yet"})
	if n := embeds(linked); n != 0 {
		t.Fatalf("a preview came at once: %d embeds", n)
	}
	st, b := call(t, srv, auth, "PATCH", path+"/"+edited, map[string]any{"content": "now https://docs.example/b"})
	accepted(t, "an edit", st, b)
	time.Sleep(PreviewDelay + 100*time.Millisecond)
	for id, want := range map[string]int{linked: 1, suppressed: 0, coded: 0, edited: 1} {
		if n := embeds(id); n != want {
			t.Errorf("message %s has %d embeds, want %d", id, n, want)
		}
	}
	// An edit that sets the flag hides the preview; one that clears it
	// shows it again.
	st, b = call(t, srv, auth, "PATCH", path+"/"+linked, map[string]any{"flags": 4})
	accepted(t, "an edit", st, b)
	if n := embeds(linked); n != 0 {
		t.Errorf("suppressed, the message still has %d embeds", n)
	}
	st, b = call(t, srv, auth, "PATCH", path+"/"+linked, map[string]any{"flags": 0})
	accepted(t, "an edit", st, b)
	if n := embeds(linked); n != 1 {
		t.Errorf("unsuppressed, the message has %d embeds", n)
	}
}
