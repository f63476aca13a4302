//go:build e2e

package e2e

import (
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/testutil/fakemodel"
	"github.com/ccbridge/ccbridge/internal/testutil/faketelegram"
)

// Telegram's TestUsageLimitContinueAtReset, through the same core
// (internal/usage): a turn that fails on a usage limit says in the topic
// when it resets and offers Continue at reset as a button; clicked (the
// click answered), and with the daemon restarted meanwhile, "continue"
// reaches Claude once, after the reset, and the topic hears so.
func TestTelegramUsageLimitContinueAtReset(t *testing.T) {
	t.Parallel()
	tb := newTelegramBridge(t, "")
	reset := time.Now().Add(25 * time.Second).Truncate(time.Minute).Add(time.Minute).UTC()
	at := strconv.FormatInt(reset.Unix(), 10)
	tb.model.SetHeaders(map[string]string{"anthropic-ratelimit-unified-status": "rejected", "anthropic-ratelimit-unified-reset": at,
		"anthropic-ratelimit-unified-5h-status": "rejected", "anthropic-ratelimit-unified-5h-reset": at, "anthropic-ratelimit-unified-5h-utilization": "1.0",
		"anthropic-ratelimit-unified-representative-claim": "five_hour", "retry-after": "3600"})
	var calls atomic.Int32
	tb.model.Script("SCN_LIMIT", fakemodel.Step{Dynamic: func(r fakemodel.Request) fakemodel.Step {
		if calls.Add(1) == 1 {
			return fakemodel.Step{Status: 429, ErrMsg: "You've hit your 5-hour limit · resets " + strings.ToLower(reset.Format("3:04PM")) + " (UTC)"}
		}
		return fakemodel.Text("continued after the reset")
	}})
	tb.say("SCN_LIMIT please")
	tb.waitReply("The usage limit resets at " + reset.Format("15:04") + " UTC")
	offer := tb.waitBot("the Continue at reset offer", func(m faketelegram.Message) bool {
		return m.ReplyMarkup != nil && strings.Contains(m.Text, "Send \"continue\" to Claude when the limit resets")
	})
	tb.model.SetHeaders(nil)
	var data string
	for _, row := range offer.ReplyMarkup.InlineKeyboard {
		for _, b := range row {
			data = b.CallbackData
		}
	}
	tb.press(t, tb.tg.Owner, offer, data)
	tb.waitCardText(offer.MessageID, "will send \"continue\"")
	tb.bridge.stop() // a daemon restart before the reset
	tb.start()

	time.Sleep(time.Until(reset.Add(-2 * time.Second)))
	for _, r := range tb.model.Requests() {
		if strings.HasSuffix(r.LastUserText, "continue") {
			t.Fatalf("\"continue\" sent before the reset at %s", reset)
		}
	}
	tb.model.WaitRequest(t, long, "continue after the reset", func(r fakemodel.Request) bool { return strings.HasSuffix(r.LastUserText, "continue") })
	if time.Now().Before(reset) {
		t.Errorf("\"continue\" reached Claude at %s, before the reset at %s", time.Now(), reset)
	}
	tb.waitReply("The usage limit has reset: sent \"continue\" to Claude.")
	tb.waitReply("continued after the reset")
	n := 0
	for _, r := range tb.model.Requests() {
		if strings.HasSuffix(r.LastUserText, "continue") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("\"continue\" sent %d times", n)
	}
	for _, m := range tb.tg.Messages(tb.tg.ChatID, tb.topic) {
		if strings.Contains(m.Text, "Typed at the terminal") {
			t.Errorf("ccbridge's own \"continue\" was mirrored: %q", m.Text)
		}
	}
}
