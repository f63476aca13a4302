//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/hook"
	"github.com/ccbridge/ccbridge/internal/state"
)

// The floor of the reply benchmarks: a Stop hook that only stamps the time
// (bench/stamphook), registered in the user's settings beside ccbridge's
// own, in the same sessions and turns. Claude Code fires both at once, so
// per turn, stamp → reply created is ccbridge's share and model done →
// stamp is Claude Code's.

var stampOnce struct {
	sync.Once
	bin string
	err error
}

func stampHook(t testing.TB) string {
	t.Helper()
	stampOnce.Do(func() {
		stampOnce.bin = filepath.Join(bins.dir, "stamphook")
		out, err := exec.Command("go", "build", "-o", stampOnce.bin, "../bench/stamphook").CombinedOutput()
		if err != nil {
			stampOnce.err = fmt.Errorf("build stamphook: %v\n%s", err, out)
		}
	})
	if stampOnce.err != nil {
		t.Fatal(stampOnce.err)
	}
	return stampOnce.bin
}

// floor registers the stamp hook for every session of the bridge (before
// any is started) and turns on the Stop hook's step timings; it returns
// the file the stamps go to.
func (b *bridge) floor() string {
	b.t.Helper()
	stamps := filepath.Join(filepath.Dir(b.cfg), "stamps")
	settings := map[string]any{"hooks": map[string]any{"Stop": []any{map[string]any{"hooks": []any{
		map[string]any{"type": "command", "command": stampHook(b.t) + " " + stamps, "async": true},
	}}}}}
	raw, _ := json.Marshal(settings)
	path := filepath.Join(b.claudeHome(), ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		b.t.Fatal(err)
	}
	b.reconfigure(func(c string) string {
		return strings.Replace(c, "env = { ", "env = { "+hook.EnvTrace+` = "1", `, 1)
	})
	return stamps
}

// stamps reads the stamp hook's file: prompt id → when its Stop hook ran.
func readStamps(t testing.TB, path string) map[string]time.Time {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]time.Time{}
	for line := range strings.Lines(string(raw)) {
		id, ns, ok := strings.Cut(strings.TrimSpace(line), " ")
		n, err := strconv.ParseInt(ns, 10, 64)
		if ok && err == nil {
			out[id] = time.Unix(0, n)
		}
	}
	return out
}

// replyTimings reads the Stop hooks' step timings from the hook log:
// prompt id → step → when it was done.
func (b *bridge) replyTimings() map[string]map[string]time.Time {
	b.t.Helper()
	raw, err := os.ReadFile(filepath.Join(b.runtime, "logs", "hook.log"))
	if err != nil {
		b.t.Fatal(err)
	}
	out := map[string]map[string]time.Time{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if !bytes.Contains(sc.Bytes(), []byte(`"reply timings"`)) {
			continue
		}
		d := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		d.UseNumber()
		var rec map[string]any
		if d.Decode(&rec) != nil || rec["event"] != "Stop" {
			continue
		}
		id, _ := rec["prompt"].(string)
		steps := map[string]time.Time{}
		for k, v := range rec {
			if n, ok := v.(json.Number); ok && k != "pid" {
				if ns, err := n.Int64(); err == nil {
					steps[k] = time.Unix(0, ns)
				}
			}
		}
		out[id] = steps
	}
	if len(out) == 0 {
		b.t.Fatalf("no reply timings in the hook log: is %s set in Claude's environment?", hook.EnvTrace)
	}
	return out
}

// traceSteps are the Stop hook's steps in the order they happen; a step
// a run did not take is left out of its breakdown.
var traceSteps = []string{"start", "parsed", "session", "place", "transcript", "recorded", "composed", "locked", "send",
	"http_get_conn", "http_connected", "http_sent", "created", "http_response", "posted", "delivered", "synced", "final"}

// breakdown is, per step, the median time from the step before it; the
// first step is measured from the floor's stamp (the hook's process
// start-up, give or take which of the two Claude Code started first).
type breakdown map[string][]time.Duration

func (bd breakdown) add(stamp time.Time, steps map[string]time.Time) {
	prev, prevAt := "stamp", stamp
	for _, s := range traceSteps {
		at, ok := steps[s]
		if !ok {
			continue
		}
		bd[prev+" → "+s] = append(bd[prev+" → "+s], at.Sub(prevAt))
		prev, prevAt = s, at
	}
}

func (bd breakdown) log(b *testing.B) {
	var keys []string
	for k := range bd {
		keys = append(keys, k)
	}
	order := func(k string) int { _, to, _ := strings.Cut(k, " → "); return slices.Index(traceSteps, to) }
	slices.SortFunc(keys, func(x, y string) int { return order(x) - order(y) })
	// Three steps a line: go test keeps only the first ten lines of a
	// benchmark's log.
	var sb strings.Builder
	for i, k := range keys {
		if i%3 == 0 {
			sb.WriteString("\n ")
		}
		d := bd[k]
		fmt.Fprintf(&sb, " %s %.2f (max %.2f);", k, ms(pct(d, 50)), ms(pct(d, 100)))
	}
	b.Logf("where the time goes, ms p50 per step (%d turns):%s", len(bd["stamp → start"]), sb.String())
}

// promptLatencies reports, as p50 and p95, how long 20 messages sent by
// say take to reach the agent's UserPromptSubmit hook (the prompt recorded
// in the session key's record), each turn's reply awaited before the next.
func promptLatencies(b *testing.B, store *state.Store, key string, say, waitReply func(string)) {
	b.Helper()
	const samples = 20
	var lat []time.Duration
	for i := range samples {
		text := fmt.Sprintf("latency probe %d", i)
		start := time.Now()
		say(text)
		for {
			s, _ := store.Sessions.Get(key)
			if slices.ContainsFunc(s.Prompts, func(pr state.Prompt) bool { return pr.Text == text }) {
				lat = append(lat, time.Since(start))
				break
			}
			if time.Since(start) > long {
				b.Fatalf("prompt %d never seen", i)
			}
			time.Sleep(2 * time.Millisecond)
		}
		waitReply("ok: " + text)
	}
	b.ReportMetric(ms(pct(lat, 50)), "ms-p50")
	b.ReportMetric(ms(pct(lat, 95)), "ms-p95")
}

// pct is the p-th percentile (nearest rank) of d.
func pct(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := (len(s)*p+99)/100 - 1
	return s[max(0, min(i, len(s)-1))]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
