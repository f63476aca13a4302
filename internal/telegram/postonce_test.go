package telegram

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/testutil/faketelegram"
)

// A retry with the nonce of a post still under way (the outbox's, after
// the hook stopped waiting for a slow Telegram) takes that post's message:
// one message, never two (review of the Telegram front end).
func TestPostOnceWaitsForTheSameNonceUnderWay(t *testing.T) {
	w := newWorld(t)
	ch, thread := w.topic("api")
	slow := make(chan struct{})
	w.tg.Hook("sendMessage", func(faketelegram.Call) *faketelegram.Error {
		<-slow
		return nil
	})
	ids := make([]string, 2)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() {
			id, err := w.p.PostOnce(context.Background(), ch, "reply-1", chat.Message{Content: "the reply"})
			if err != nil {
				t.Error(err)
			}
			ids[i] = id
		})
		time.Sleep(50 * time.Millisecond)
	}
	close(slow)
	wg.Wait()
	if n := len(w.posts(thread)); n != 1 || ids[0] != ids[1] || ids[0] == "" {
		t.Fatalf("%d messages, ids %v", n, ids)
	}
}
