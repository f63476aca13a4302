package gateway

import (
	"context"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/discord"
	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
)

// seeing is a Handler that hands on the clicks it gets.
type seeing struct {
	recorder
	clicks chan chat.ComponentEvent
}

func (s *seeing) HandleComponent(ev chat.ComponentEvent, resp chat.Responder) {
	_ = resp.DeferUpdate()
	s.clicks <- ev
}

// A message with a link button beside a control goes out as Discord takes
// it (the fake refuses a link with a custom_id or a url that is not
// http(s)), and a click on its control reports the message as drawn: its
// face, link included, is the one ccbridge bound (internal/guard), so the
// control acts; a link pointed elsewhere changes that face.
func TestALinkButtonRoundTripsWithItsFace(t *testing.T) {
	srv := fakediscord.New(t)
	s := &seeing{recorder: *newRecorder(), clicks: make(chan chat.ComponentEvent, 1)}
	openBot(t, srv, s)
	bot := srv.Main()
	p, err := discord.NewPoster(srv.URL, bot.Token)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	drawn := chat.Message{Content: "📝 Changes", Rows: []chat.Row{{Buttons: []chat.Button{
		{Label: "Merge this", CustomID: "merge", Style: chat.Primary},
		{Label: "Open in browser", URL: "http://127.0.0.1:7878/s/AXNhYmM/diff"},
	}}}}
	id, err := p.Post(ctx, bot.ChannelID, drawn)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := srv.Message(id)
	if c := m.Component("merge"); c == nil {
		t.Fatalf("the control is missing: %+v", m.Components)
	}
	srv.Click(id, "merge", srv.NewUser("owner"))
	var ev chat.ComponentEvent
	select {
	case ev = <-s.clicks:
	case <-time.After(10 * time.Second):
		t.Fatal("the click never arrived")
	}
	if got, want := chat.Face(ev.Content, ev.Rows), chat.Face(drawn.Content, drawn.Rows); got != want {
		t.Errorf("the clicked message shows the face\n%q\nccbridge drew\n%q", got, want)
	}
	moved := drawn
	moved.Rows = []chat.Row{{Buttons: []chat.Button{drawn.Rows[0].Buttons[0], {Label: "Open in browser", URL: "https://evil.example/"}}}}
	if chat.Face(ev.Content, ev.Rows) == chat.Face(moved.Content, moved.Rows) {
		t.Error("a link pointed elsewhere shows the same face")
	}
}
