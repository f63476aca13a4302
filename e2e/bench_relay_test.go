//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
)

// BenchmarkMessageToPrompt measures a Discord message → the prompt seen by
// Claude Code's UserPromptSubmit hook, with the real CLI (session warm).
func BenchmarkMessageToPrompt(b *testing.B) {
	br := newBridge(b, 1, 1, "")
	p := br.projects[0]
	br.say(p, "warm up")
	br.waitReply(p, "ok: warm up")
	const samples = 20
	var lat []time.Duration
	for i := range samples {
		text := fmt.Sprintf("latency probe %d", i)
		start := time.Now()
		br.say(p, text)
		for {
			s, _ := br.store.Sessions.Get(p.key)
			if slices.ContainsFunc(s.Prompts, func(pr state.Prompt) bool { return pr.Text == text }) {
				lat = append(lat, time.Since(start))
				break
			}
			if time.Since(start) > long {
				b.Fatalf("prompt %d never seen", i)
			}
			time.Sleep(2 * time.Millisecond)
		}
		br.waitReply(p, "ok: "+text)
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "ms-median")
	b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "ms-p95")
}

// BenchmarkDaemonIdleRSS measures the daemon's resident memory with 2 bots
// × 5 projects connected and idle.
func BenchmarkDaemonIdleRSS(b *testing.B) {
	br := newBridge(b, 2, 5, "")
	time.Sleep(10 * time.Second)
	rss, hwm := procKiB(b, br.cmd.Process.Pid, "VmRSS"), procKiB(b, br.cmd.Process.Pid, "VmHWM")
	b.ReportMetric(float64(rss)/1024, "MiB-rss")
	b.ReportMetric(float64(hwm)/1024, "MiB-peak")
}

func procKiB(b *testing.B, pid int, field string) int {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	b.Fatalf("%s not in /proc/%d/status", field, pid)
	return 0
}

// BenchmarkClickToDecision measures a click on Allow → the decision printed
// by the waiting PermissionRequest hook, through the daemon and the fake
// Discord on loopback.
func BenchmarkClickToDecision(b *testing.B) {
	br := newBridge(b, 1, 1, "")
	p := br.projects[0]
	const key = "bench-click"
	if _, err := br.store.Sessions.Update(context.Background(), key, func(s *state.Session) error {
		s.Server, s.ChannelID = p.bot.Name, p.channel
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	const samples = 15
	var lat []time.Duration
	for i := range samples {
		cmdText := fmt.Sprintf("echo bench-%d", i)
		payload := fmt.Sprintf(`{"session_id":"sid-click","prompt_id":"p%d","transcript_path":"/nonexistent","cwd":%q,"hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":%q}}`, i, p.dir, cmdText)
		hook := exec.Command(bins.hookPretool)
		hook.Stdin = strings.NewReader(payload)
		hook.Env = append(os.Environ(), "CCBRIDGE_RUNTIME_DIR="+br.runtime, "CCBRIDGE_SESSION="+key)
		var out bytes.Buffer
		hook.Stdout = &out
		if err := hook.Start(); err != nil {
			b.Fatal(err)
		}
		card := br.waitCard(p, "the card", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, cmdText) })
		start := time.Now()
		br.srv.Click(card.ID, action(b, card, "allow"), br.owner)
		if err := hook.Wait(); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
		if !strings.Contains(out.String(), `"behavior":"allow"`) {
			b.Fatalf("hook printed %q", out.String())
		}
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "ms-median")
	b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "ms-p95")
}
