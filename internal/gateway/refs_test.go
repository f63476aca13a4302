package gateway

import (
	"context"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/discord"
	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
)

// An answer to a click renders the core's message references as jump
// links into the interaction's server (a Deliver anyway click's "📨
// Delivering this message now").
func TestAnswersLinkMessageRefs(t *testing.T) {
	srv := fakediscord.New(t)
	a := &answering{recorder: *newRecorder(), ids: make(chan string, 1)}
	openBot(t, srv, a)
	bot := srv.Main()
	p, err := discord.NewPoster(srv.URL, bot.Token)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	button := []chat.Row{{Buttons: []chat.Button{{Label: "Deliver anyway", CustomID: "late"}}}}
	offer, err := p.Post(ctx, bot.ChannelID, chat.Message{Content: "⚠️ offer", Rows: button})
	if err != nil {
		t.Fatal(err)
	}
	ref := chat.MessageRef{ChannelID: bot.ChannelID, MessageID: "77", Label: "this message"}
	a.answer = func(resp chat.Responder) (string, error) {
		return resp.Update(chat.Message{Content: "📨 Delivering " + ref.String() + " now."})
	}
	srv.Click(offer, "late", srv.NewUser("owner"))
	a.drew(t)
	m, _ := srv.Message(offer)
	if want := "📨 Delivering [this message](https://discord.com/channels/" + bot.GuildID + "/" + bot.ChannelID + "/77) now."; m.Content != want {
		t.Errorf("content %q, want %q", m.Content, want)
	}
}

// clicked is answering that keeps the clicks' events.
type clicked struct {
	answering
	events chan chat.ComponentEvent
}

func (s *clicked) HandleComponent(ev chat.ComponentEvent, resp chat.Responder) {
	s.events <- ev
	s.answering.HandleComponent(ev, resp)
}

// A click carries its message's content as the core drew it: the jump
// link Discord shows is the reference again, so the face the controls
// are bound to matches (a Deliver anyway offer's click acts).
func TestClickCarriesTheContentAsDrawn(t *testing.T) {
	srv := fakediscord.New(t)
	s := &clicked{answering: answering{recorder: *newRecorder(), ids: make(chan string, 1)}, events: make(chan chat.ComponentEvent, 1)}
	s.answer = func(resp chat.Responder) (string, error) { return resp.Update(chat.Message{Content: "done"}) }
	openBot(t, srv, s)
	bot := srv.Main()
	p, err := discord.NewPoster(srv.URL, bot.Token)
	if err != nil {
		t.Fatal(err)
	}
	p.Guild = bot.GuildID
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	drawn := "⚠️ " + chat.MessageRef{ChannelID: bot.ChannelID, MessageID: "77", Label: "This message"}.String() + " was sent 20m0s ago."
	offer, err := p.Post(ctx, bot.ChannelID, chat.Message{Content: drawn, Rows: []chat.Row{{Buttons: []chat.Button{{Label: "Deliver anyway", CustomID: "late"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := srv.Message(offer); m.Content == drawn {
		t.Fatalf("Discord shows the reference itself: %q", m.Content)
	}
	srv.Click(offer, "late", srv.NewUser("owner"))
	select {
	case ev := <-s.events:
		if ev.Content != drawn {
			t.Errorf("the click carries %q, want %q", ev.Content, drawn)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no click")
	}
	s.drew(t)
}
