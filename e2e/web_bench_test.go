//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ccbridge/ccbridge/internal/web"
)

// BenchmarkWebLineToPage measures a line appended to a transcript → the
// line shown in an open session page, in the real browser (headless
// Chromium at phone size): the web view's whole path (fsnotify, the
// server-sent event, the page's script, the DOM). Times are the page's
// clock (performance.timeOrigin + now, when a mutation shows the line)
// against the benchmark's, both the machine's wall clock. Target: p50 ≤
// 300 ms (issue 28).
func BenchmarkWebLineToPage(b *testing.B) {
	const samples = 30
	tb := newTab(b)
	dir := b.TempDir()
	transcript := filepath.Join(dir, "t.jsonl")
	if err := os.WriteFile(transcript, nil, 0o600); err != nil {
		b.Fatal(err)
	}
	h, err := web.New(web.Options{Sessions: benchSession{web.Session{Key: "bench", Name: "bench", Dir: dir, Transcript: transcript}},
		ReadDenied: func(web.Session, string) bool { return true }, StateDir: filepath.Join(dir, "state"), Listen: "127.0.0.1:0"})
	if err != nil {
		b.Fatal(err)
	}
	srv := web.NewServer(h)
	if err := srv.Start(); err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	if code := tb.open(h.Link(web.SessionScope("bench"), 0)); code != 200 {
		b.Fatalf("the session page answered %d", code)
	}
	eval[bool](tb, `(() => {
		window.seen = {};
		new MutationObserver(() => {
			const t = performance.timeOrigin + performance.now();
			document.querySelectorAll("#log .reply").forEach(e => { const k = e.textContent.trim(); if (!(k in window.seen)) window.seen[k] = t; });
		}).observe(document.getElementById("log"), {childList: true, subtree: true});
		return true;
	})()`)
	f, err := os.OpenFile(transcript, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var lat []float64
	for i := range samples {
		key := fmt.Sprintf("bench-line-%d", i)
		line := fmt.Sprintf(`{"type":"assistant","message":{"id":"m%d","role":"assistant","content":[{"type":"text","text":%q}]}}`+"\n", i, key)
		start := float64(time.Now().UnixNano()) / 1e6
		if _, err := f.WriteString(line); err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(tb.ctx, long)
		shown, err := chromedp.Run(ctx, chromedp.Poll[float64](fmt.Sprintf(`window.seen[%s]`, js(key)), chromedp.WithPollingMutation()))
		cancel()
		if err != nil {
			b.Fatalf("%s never showed: %v", key, err)
		}
		lat = append(lat, shown-start)
		time.Sleep(20 * time.Millisecond) // lines a turn apart, not one write
	}
	slices.Sort(lat)
	b.ReportMetric(lat[len(lat)/2], "ms-p50")
	b.ReportMetric(lat[len(lat)*95/100], "ms-p95")
	b.ReportMetric(lat[len(lat)-1], "ms-max")
}

type benchSession struct{ s web.Session }

func (o benchSession) Session(key string) (web.Session, bool) { return o.s, key == o.s.Key }
func (o benchSession) List(string) []web.Session              { return nil }

// BenchmarkDaemonIdleRSSWebView measures the daemon's resident memory with
// the web view serving and no request, and the same daemon with the view
// off, one after the other (target: ≤ 20 MiB with the view on; issue 28).
func BenchmarkDaemonIdleRSSWebView(b *testing.B) {
	for _, web := range []string{fmt.Sprintf("127.0.0.1:%d", freePort(b)), "off"} {
		br := newBridge(b, 1, 1, fmt.Sprintf("[web]\nlisten = %q\n", web))
		if web != "off" {
			waitOutput(b, br.out, "web view serving", 10*time.Second)
		}
		time.Sleep(10 * time.Second)
		rss := procKiB(b, br.cmd.Process.Pid, "VmRSS")
		name := "MiB-rss-web-on"
		if web == "off" {
			name = "MiB-rss-web-off"
		}
		b.ReportMetric(float64(rss)/1024, name)
		if out := br.out.String(); strings.Contains(out, "web view cannot start") {
			b.Fatalf("the web view did not start:\n%s", out)
		}
	}
}
