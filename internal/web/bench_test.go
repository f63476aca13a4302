package web

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// firstByteWriter records when the first byte of the body is written.
type firstByteWriter struct {
	*httptest.ResponseRecorder
	first time.Time
}

func (w *firstByteWriter) Write(b []byte) (int, error) {
	if w.first.IsZero() {
		w.first = time.Now()
	}
	return w.ResponseRecorder.Write(b)
}

// BenchmarkSessionFirstByte10MiB: first byte of the session page over a
// 10 MiB transcript (target ≤ 50 ms; issue 28).
func BenchmarkSessionFirstByte10MiB(b *testing.B) {
	e := newEnv(b)
	var s strings.Builder
	for i := 0; s.Len() < 10<<20; i++ {
		s.WriteString(userLine(fmt.Sprint("prompt ", i)))
		s.WriteString(replyLine(fmt.Sprint("m", i), "Some **Markdown** with `code` and a list:\n\n- one\n- two\n"))
		s.WriteString(toolLines(fmt.Sprint("toolu_", i), "go test ./...", strings.Repeat("ok  \tpkg\t0.01s\n", 20)))
	}
	firstByte(b, e, s.String())
}

// BenchmarkSessionFirstByteSparse10MiB: the same for a transcript as
// Claude Code 2.1.328 writes it, a prompt snapshot of ~64 KiB beside each
// short turn: the page widens its window to 2 MiB to find enough to show.
func BenchmarkSessionFirstByteSparse10MiB(b *testing.B) {
	e := newEnv(b)
	var s strings.Builder
	snapshot := `{"type":"attachment","attachment":{"type":"prompt_snapshot","systemPrompt":["` + strings.Repeat("You are Claude Code. ", 3200) + `"]}}` + "\n"
	for i := 0; s.Len() < 10<<20; i++ {
		s.WriteString(snapshot)
		s.WriteString(userLine(fmt.Sprint("prompt ", i)))
		s.WriteString(replyLine(fmt.Sprint("m", i), "Done."))
	}
	firstByte(b, e, s.String())
}

func firstByte(b *testing.B, e *env, transcript string) {
	write(b, e.transcript, transcript)
	p := e.path(SessionScope("proj"))
	var total time.Duration
	n := 0
	for b.Loop() {
		w := &firstByteWriter{ResponseRecorder: httptest.NewRecorder()}
		start := time.Now()
		e.h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, p, nil))
		if w.Code != http.StatusOK {
			b.Fatalf("page = %d", w.Code)
		}
		total += w.first.Sub(start)
		n++
	}
	b.ReportMetric(float64(total.Microseconds())/float64(n)/1000, "ms/first-byte")
}
