package gateway

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/discord"
	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
)

// answering is a Handler whose clicks are answered by answer, which
// reports the id the answer drew.
type answering struct {
	recorder
	answer func(chat.Responder) (string, error)
	ids    chan string
}

func (a *answering) HandleComponent(_ chat.ComponentEvent, resp chat.Responder) {
	id, err := a.answer(resp)
	if err != nil {
		id = "error: " + err.Error()
	}
	a.ids <- id
}

func (a *answering) drew(t *testing.T) string {
	t.Helper()
	select {
	case id := <-a.ids:
		return id
	case <-time.After(10 * time.Second):
		t.Fatal("the click was never answered")
		return ""
	}
}

// Edit and Update give back the id of the message they drew (the guard
// binds it to what it shows), with SUPPRESS_EMBEDS when it carries
// controls; an Update with files replaces the message's attachments
// (fidelity review 3, P10: an edited long transcript is shown with the
// edited words attached, not the old ones).
func TestAnswersGiveTheirMessageAndReplaceItsFiles(t *testing.T) {
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
	button := []chat.Row{{Buttons: []chat.Button{{Label: "Send", CustomID: "send"}}}}
	review, err := p.Post(ctx, bot.ChannelID, chat.Message{Content: "🎙️ Transcript (attached)", Rows: button,
		Files: []chat.File{{Name: "transcript.txt", Data: []byte("the words as heard")}}})
	if err != nil {
		t.Fatal(err)
	}
	owner := srv.NewUser("owner")

	a.answer = func(resp chat.Responder) (string, error) {
		return resp.Update(chat.Message{Content: "🎙️ Sent (edited; attached): see https://docs.example", Rows: button,
			Files: []chat.File{{Name: "transcript.txt", Data: []byte("the words as edited")}}})
	}
	srv.Click(review, "send", owner)
	if id := a.drew(t); id != review {
		t.Fatalf("Update drew %q, want the clicked message %s", id, review)
	}
	m, _ := srv.Message(review)
	if len(m.Files) != 1 || string(m.Files[0].Data) != "the words as edited" || m.Flags&4 == 0 {
		t.Fatalf("after the update: flags %d, files %+v", m.Flags, m.Files)
	}

	// Edited short: the words are in the text, and the attachment goes.
	a.answer = func(resp chat.Responder) (string, error) {
		return resp.Update(chat.Message{Content: "🎙️ Sent (edited): short now", Rows: button, DropFiles: true})
	}
	srv.Click(review, "send", owner)
	a.drew(t)
	if m, _ := srv.Message(review); len(m.Files) != 0 {
		t.Fatalf("edited short, the message still has %d file(s)", len(m.Files))
	}

	var mu sync.Mutex
	a.answer = func(resp chat.Responder) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		if err := resp.DeferUpdate(); err != nil {
			return "", err
		}
		return resp.Edit(chat.Reply{Content: "redrawn https://docs.example", Rows: button})
	}
	srv.Click(review, "send", owner)
	if id := a.drew(t); id != review {
		t.Fatalf("Edit after DeferUpdate drew %q, want %s", id, review)
	}
	a.answer = func(resp chat.Responder) (string, error) {
		if err := resp.Defer(false); err != nil {
			return "", err
		}
		return resp.Edit(chat.Reply{Content: "an answer of its own https://docs.example", Rows: button})
	}
	srv.Click(review, "send", owner)
	answer := a.drew(t)
	if m, ok := srv.Message(answer); answer == review || !ok || m.Content != "an answer of its own https://docs.example" || m.Flags&4 == 0 {
		t.Fatalf("Edit after Defer drew %q: %+v", answer, m)
	}
	time.Sleep(fakediscord.PreviewDelay + 200*time.Millisecond)
	for _, id := range []string{review, answer} {
		if m, _ := srv.Message(id); len(m.Embeds) != 0 {
			t.Errorf("message %s got a link preview", id)
		}
	}
}
