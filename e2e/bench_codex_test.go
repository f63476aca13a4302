//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
)

// The rows of BenchmarkMessageToPrompt and BenchmarkModelDoneToReply for a
// Codex project: the real daemon, fake Discord, the real Codex CLI on the
// fake Responses API (session warm), the product's defaults (footer on).

// BenchmarkCodexMessageToPrompt measures a Discord message → the prompt
// seen by Codex's UserPromptSubmit hook.
func BenchmarkCodexMessageToPrompt(b *testing.B) {
	br, _ := newCodexBridge(b)
	p := br.projects[1]
	br.say(p, "warm up")
	br.waitReply(p, "ok: warm up")
	promptLatencies(b, br.store, p.key, func(text string) { br.say(p, text) }, func(text string) { br.waitReply(p, text) })
}

// BenchmarkCodexModelDoneToReply measures the model's answer of a turn
// written out in full → the reply created in Discord: Codex, its Stop hook
// and the post, nothing of the test's own polling.
func BenchmarkCodexModelDoneToReply(b *testing.B) {
	br, fake := newCodexBridge(b)
	p := br.projects[1]
	br.say(p, "warm up")
	br.waitReply(p, "ok: warm up")
	const samples = 30
	var lat []time.Duration
	for i := range samples {
		text := fmt.Sprintf("done probe %d", i)
		br.say(p, text)
		reply := br.waitReply(p, "ok: "+text)
		var done time.Time
		for _, r := range fake.Requests() {
			if r.LastUserText == text && len(r.Outputs) == 0 {
				done = r.Done
			}
		}
		if done.IsZero() {
			b.Fatalf("no finished model answer for %q", text)
		}
		br.waitFooter(reply)
		lat = append(lat, reply.Created().Sub(done))
	}
	b.ReportMetric(ms(pct(lat, 50)), "ms-p50")
	b.ReportMetric(ms(pct(lat, 95)), "ms-p95")
	b.ReportMetric(ms(pct(lat, 100)), "ms-max")
}

// waitFooter waits for the reply's footer (a reply posted at once gets it
// when the turn's figures are read): its absence means not the defaults.
func (b *bridge) waitFooter(m *fakediscord.Message) {
	b.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cur, ok := b.srv.Message(m.ID); ok && strings.Contains(cur.Content, "\n-# ") {
			return
		}
	}
	cur, _ := b.srv.Message(m.ID)
	b.t.Fatalf("reply %q has no footer: not the default config", cur.Content)
}
