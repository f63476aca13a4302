package telegram

import (
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/testutil/faketelegram"
)

// A click whose answer Telegram never takes (it hangs, or the network is
// gone) does not hold the bot's stop for longer than its grace: the
// daemon's shutdown goes on (review of the Telegram front end).
func TestStopIsNotHeldByAHangingClick(t *testing.T) {
	w := newWorld(t)
	h := newRecorder()
	stop := runBot(t, w, w.p, h, Options{IsOwner: w.onlyOwner})
	release := make(chan struct{})
	defer close(release)
	w.tg.Hook("answerCallbackQuery", func(faketelegram.Call) *faketelegram.Error {
		select {
		case <-release:
		case <-time.After(time.Minute):
		}
		return &faketelegram.Error{Code: 502, Description: "Bad Gateway"}
	})
	_, id := w.card(t, permRows)
	w.click(t, w.tg.Owner, id, "Deny")
	time.Sleep(200 * time.Millisecond) // the click's answer is under way
	start := time.Now()
	stop()
	if took := time.Since(start); took > shutdownGrace+3*time.Second {
		t.Fatalf("the bot took %s to stop", took)
	}
}
