package gateway

import (
	"context"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/discord"
	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
)

// clicked is answering that keeps the clicks' events.
type clicked struct {
	answering
	events chan chat.ComponentEvent
}

func (c *clicked) HandleComponent(ev chat.ComponentEvent, resp chat.Responder) {
	c.events <- ev
	c.answering.HandleComponent(ev, resp)
}

// offerClicked opens a bot answering clicks with answer, posts drawn with
// a Deliver anyway button through a poster in the bot's server, clicks it
// and returns the click's event and the offer's id.
func offerClicked(t *testing.T, srv *fakediscord.Server, drawn string, answer func(chat.Responder) (string, error)) (chat.ComponentEvent, string) {
	t.Helper()
	c := &clicked{answering: answering{recorder: *newRecorder(), ids: make(chan string, 1), answer: answer}, events: make(chan chat.ComponentEvent, 1)}
	openBot(t, srv, c)
	bot := srv.Main()
	p, err := discord.NewPoster(srv.URL, bot.Token)
	if err != nil {
		t.Fatal(err)
	}
	p.Guild = bot.GuildID
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	offer, err := p.Post(ctx, bot.ChannelID, chat.Message{Content: drawn, Rows: []chat.Row{{Buttons: []chat.Button{{Label: "Deliver anyway", CustomID: "late"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	srv.Click(offer, "late", srv.NewUser("owner"))
	c.drew(t)
	return <-c.events, offer
}

// An answer to a click renders the core's message references as jump
// links into the interaction's server (a Deliver anyway click's "📨
// Delivering this message now").
func TestAnswersLinkMessageRefs(t *testing.T) {
	srv := fakediscord.New(t)
	bot := srv.Main()
	ref := chat.MessageRef{ChannelID: bot.ChannelID, MessageID: "77", Label: "this message"}
	_, offer := offerClicked(t, srv, "⚠️ offer", func(resp chat.Responder) (string, error) {
		return resp.Update(chat.Message{Content: "📨 Delivering " + ref.String() + " now."})
	})
	m, _ := srv.Message(offer)
	if want := "📨 Delivering [this message](https://discord.com/channels/" + bot.GuildID + "/" + bot.ChannelID + "/77) now."; m.Content != want {
		t.Errorf("content %q, want %q", m.Content, want)
	}
}

// A click carries its message's content as the core drew it: the jump
// link Discord shows is the reference again, so the face the controls
// are bound to matches (a Deliver anyway offer's click acts).
func TestClickCarriesTheContentAsDrawn(t *testing.T) {
	srv := fakediscord.New(t)
	bot := srv.Main()
	drawn := "⚠️ " + chat.MessageRef{ChannelID: bot.ChannelID, MessageID: "77", Label: "This message"}.String() + " was sent 20m0s ago."
	ev, offer := offerClicked(t, srv, drawn, func(resp chat.Responder) (string, error) { return resp.Update(chat.Message{Content: "done"}) })
	if m, _ := srv.Message(offer); m.Content == drawn {
		t.Fatalf("Discord shows the reference itself: %q", m.Content)
	}
	if ev.Content != drawn {
		t.Errorf("the click carries %q, want %q", ev.Content, drawn)
	}
	if ev.MessageID != offer {
		t.Errorf("the click is on %q, want the offer %q", ev.MessageID, offer)
	}
}
