package router

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/ccbridge/ccbridge/internal/chat"
)

// wideReplier is a Replier whose "home" front end takes 4,096 characters
// in one message (Telegram's), and records what it is given.
type wideReplier struct {
	Replier
	mu  sync.Mutex
	got []int
}

func (w *wideReplier) Limit(server string) int {
	if server == "home" {
		return 4096
	}
	return 0 // unknown: Discord's
}

func (w *wideReplier) Post(_ context.Context, _, _ string, m chat.Message) (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.got = append(w.got, utf8.RuneCountInString(m.Content))
	return "m", nil
}

func (w *wideReplier) PostCard(ctx context.Context, server, ch string, m chat.Message) (string, []string, error) {
	id, err := w.Post(ctx, server, ch, m)
	return id, nil, err
}

// The last guard cuts a post at its front end's limit, not Discord's
// everywhere: a 3,000-character answer reaches Telegram whole, and a
// front end that says no limit keeps Discord's (issue 27).
func TestPostsAreCutAtTheirFrontEndsLimit(t *testing.T) {
	w := &wideReplier{}
	f := fittingReplier{w}
	long := strings.Repeat("x", 3000)
	for _, server := range []string{"home", "work"} {
		if _, err := f.Post(context.Background(), server, "c", chat.Message{Content: long}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := f.PostCard(context.Background(), server, "c", chat.Message{Content: long}); err != nil {
			t.Fatal(err)
		}
	}
	if want := []int{3000, 3000, chat.Limit, chat.Limit}; !slices.Equal(w.got, want) {
		t.Errorf("posted lengths %v, want %v", w.got, want)
	}
}

// heard records the answers it is given.
type heard struct {
	chat.Responder
	got []int
}

func (h *heard) Respond(m chat.Reply) error {
	h.got = append(h.got, utf8.RuneCountInString(m.Content))
	return nil
}

// A command's answer is cut at its server's front end's limit too.
func TestAnswersAreCutAtTheirFrontEndsLimit(t *testing.T) {
	r, _, _, _, _ := newRouter(t)
	r.opt.Replier = fittingReplier{&wideReplier{}}
	h := &heard{}
	for _, server := range []string{"home", "work"} {
		if err := r.fit(server, h).Respond(chat.Reply{Content: strings.Repeat("x", 3000)}); err != nil {
			t.Fatal(err)
		}
	}
	if want := []int{3000, chat.Limit}; !slices.Equal(h.got, want) {
		t.Errorf("answered lengths %v, want %v", h.got, want)
	}
}
