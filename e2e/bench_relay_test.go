//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/state"
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
