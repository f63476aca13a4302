//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// BenchmarkTelegramMessageToPrompt measures a Telegram message (injected
// into the fake's update queue) → the prompt seen by Claude's
// UserPromptSubmit hook, warm session, the product's defaults: the long
// poll, the journal, the queue, the paste.
func BenchmarkTelegramMessageToPrompt(b *testing.B) {
	tb := newTelegramBridge(b, "")
	tb.say("warm up")
	tb.waitReply("ok: warm up")
	promptLatencies(b, tb.store, tb.key, func(text string) { tb.say(text) }, func(text string) { tb.waitReply(text) })
}

// BenchmarkTelegramModelDoneToReply measures the model's last byte of a
// turn → the sendMessage of its reply reaching the fake Telegram, warm
// session, the product's defaults (the footer on).
func BenchmarkTelegramModelDoneToReply(b *testing.B) {
	tb := newTelegramBridge(b, "")
	tb.say("warm up")
	tb.waitReply("ok: warm up")
	const samples = 30
	var lat []time.Duration
	for i := range samples {
		text := fmt.Sprintf("done probe %d", i)
		tb.say(text)
		tb.waitReply("ok: " + text)
		var done, sent time.Time
		for _, r := range tb.model.Requests() {
			if r.LastUserText == text && len(r.ToolResults) == 0 {
				done = r.Done
			}
		}
		// The fake records a call once it has answered it, after the
		// message shows.
		tb.tg.WaitFor(10*time.Second, func() bool {
			for _, c := range tb.tg.CallsTo("sendMessage") {
				if strings.Contains(c.Params["text"], "ok: "+text) {
					sent = c.At
					return true
				}
			}
			return false
		})
		if done.IsZero() || sent.IsZero() {
			b.Fatalf("probe %d: model done %v, reply sent %v", i, done, sent)
		}
		lat = append(lat, sent.Sub(done))
	}
	b.ReportMetric(ms(pct(lat, 50)), "ms-p50")
	b.ReportMetric(ms(pct(lat, 95)), "ms-p95")
	b.ReportMetric(ms(pct(lat, 100)), "ms-max")
}
