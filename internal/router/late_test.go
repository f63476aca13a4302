package router

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/config"
)

// A Deliver anyway whose message cannot be read back says so in the words
// of the server's front end: a Telegram server's names Telegram, not
// Discord.
func TestDeliverAnywayNamesTheFrontEndItReadsFrom(t *testing.T) {
	r, _, h, l, _ := catchUpRouter(t, "1300000000000000100")
	cfg := *r.conf()
	cfg.Servers = slices.Clone(cfg.Servers)
	cfg.Servers[0].Platform = config.PlatformTelegram
	r.Reconfigure(&cfg)
	h.say("1300000000000000101", "old news", 20*time.Minute)
	r.CatchUp("home", channel, "")
	l.waitFor(t, "react 1300000000000000101 ⚠️")
	waitOp(t, l, "post "+channel+" ⚠️")
	id, err := chat.ID{Instance: "inst1", Kind: lateKind, Args: []string{"1300000000000000101"}}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	h.msgs = nil // deleted meanwhile
	h.mu.Unlock()
	at := l.last()
	ev := l.on(channel, at, id)
	ev.User = chat.User{ID: owner}
	r.HandleComponent(ev, fakeResponder{l: l, at: at})
	got := waitOp(t, l, "send ⚠️ Could not read")
	want := "send ⚠️ Could not read " + chat.MessageRef{ChannelID: channel, MessageID: "1300000000000000101", Label: "this message"}.String() + " back from Telegram, so it was not delivered: "
	if !strings.HasPrefix(got, want) {
		t.Errorf("said %q, want %q…", got, want)
	}
}
