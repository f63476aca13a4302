package web

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

func userLine(text string) string {
	b, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": text}})
	return string(b) + "\n"
}

func replyLine(id, text string) string {
	b, _ := json.Marshal(map[string]any{"type": "assistant", "message": map[string]any{"id": id, "role": "assistant",
		"content": []any{map[string]any{"type": "text", "text": text}}}})
	return string(b) + "\n"
}

func toolLines(id, cmd, result string) string {
	a, _ := json.Marshal(map[string]any{"type": "assistant", "message": map[string]any{"id": "m-" + id, "role": "assistant",
		"content": []any{map[string]any{"type": "tool_use", "id": id, "name": "Bash", "input": map[string]any{"command": cmd}}}}})
	u, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user",
		"content": []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": result}}}})
	return string(a) + "\n" + string(u) + "\n"
}

func appendFile(t *testing.T, p, s string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

func TestSessionRendersTheConversation(t *testing.T) {
	e := newEnv(t)
	write(t, e.transcript, userLine("please fix <b>it</b>")+
		replyLine("m1", "Done: **bold**, <script>alert(1)</script>, [x](javascript:alert(2))\n\n<div onclick=\"x()\">block</div>\n")+
		toolLines("toolu_1", "echo hunter2hunter2", "the <output>")+
		`{"type":"assistant","isSidechain":true,"message":{"id":"side","content":[{"type":"text","text":"SIDECHAIN"}]}}`+"\n"+
		`{"type":"user","isMeta":true,"message":{"content":"META-LINE"}}`+"\n")
	b := body(t, e.get(t, e.path(SessionScope("proj"))))
	for _, want := range []string{
		"please fix &lt;b&gt;it&lt;/b&gt;",
		"<strong>bold</strong>",
		"&lt;script&gt;alert(1)&lt;/script&gt;",
		"&lt;div onclick=&#34;x()&#34;&gt;block&lt;/div&gt;",
		`<details class="tool"><summary>Bash</summary><pre class="input">echo [redacted]</pre>`,
		`<details class="result"><summary>Result</summary><pre>the &lt;output&gt;</pre></details>`,
	} {
		if !strings.Contains(b, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, bad := range []string{"<script>alert", "javascript:", "<div onclick", "SIDECHAIN", "META-LINE", "hunter2hunter2", "<b>it"} {
		if strings.Contains(b, bad) {
			t.Errorf("page holds %q", bad)
		}
	}
}

// TestSessionEndFirst: a long transcript opens on its end; the start is a
// link away, and is not read for the first page.
func TestSessionEndFirst(t *testing.T) {
	e := newEnv(t)
	var s strings.Builder
	s.WriteString(userLine("FIRST-PROMPT"))
	for i := 0; s.Len() < 3*pageBytes; i++ {
		s.WriteString(replyLine(fmt.Sprint("m", i), strings.Repeat("filler ", 100)))
	}
	s.WriteString(userLine("LAST-PROMPT"))
	write(t, e.transcript, s.String())
	p := e.path(SessionScope("proj"))
	b := body(t, e.get(t, p))
	if !strings.Contains(b, "LAST-PROMPT") || strings.Contains(b, "FIRST-PROMPT") {
		t.Fatal("the first page is not the transcript's end")
	}
	if !strings.Contains(b, fmt.Sprintf(`data-events="./events?from=%d"`, s.Len())) {
		t.Errorf("the live stream does not start at the end (%d)", s.Len())
	}
	for range 10 {
		i := strings.Index(b, `href="./?before=`)
		if i < 0 {
			break
		}
		q := b[i+len(`href="./`):]
		b = body(t, e.get(t, p+q[:strings.IndexByte(q, '"')]))
		if strings.Contains(b, "data-events") {
			t.Fatal("an earlier page follows the live stream")
		}
	}
	if !strings.Contains(b, "FIRST-PROMPT") {
		t.Fatal("following Earlier never reached the first prompt")
	}
}

type event struct{ name, data string }

func readEvents(t *testing.T, resp *http.Response) <-chan event {
	ch := make(chan event, 16)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(resp.Body)
		var ev event
		for sc.Scan() {
			l := sc.Text()
			switch {
			case strings.HasPrefix(l, "event: "):
				ev.name = l[7:]
			case strings.HasPrefix(l, "data: "):
				ev.data += l[6:] + "\n"
			case l == "" && ev.name != "":
				ch <- ev
				ev = event{}
			}
		}
	}()
	return ch
}

func openStream(t *testing.T, e *env, from int) (*http.Response, <-chan event) {
	t.Helper()
	srv := httptest.NewServer(e.h)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+e.path(SessionScope("proj"))+fmt.Sprintf("events?from=%d", from), nil)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events = %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return resp, readEvents(t, resp)
}

// TestLiveLineWithin300ms: a line Claude appends reaches the stream within
// 300 ms, rendered; a line still being written waits for its newline.
func TestLiveLineWithin300ms(t *testing.T) {
	e := newEnv(t)
	start := userLine("hello")
	write(t, e.transcript, start)
	_, events := openStream(t, e, len(start))
	half := replyLine("m2", "**LIVE** reply")
	appendFile(t, e.transcript, half[:10])
	at := time.Now()
	appendFile(t, e.transcript, half[10:])
	select {
	case ev := <-events:
		if d := time.Since(at); d > 300*time.Millisecond {
			t.Errorf("line shown after %v, want ≤ 300 ms", d)
		}
		if ev.name != "line" || !strings.Contains(ev.data, "<strong>LIVE</strong> reply") {
			t.Fatalf("event = %+v", ev)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("no event for the new line")
	}
	appendFile(t, e.transcript, toolLines("toolu_9", "ls", "a.txt"))
	var got []string
	for len(got) < 2 {
		select {
		case ev := <-events:
			got = append(got, ev.data)
		case <-time.After(2 * time.Second):
			t.Fatalf("tool call and result not streamed: %q", got)
		}
	}
	if !strings.Contains(got[0], `id="r-toolu_9"`) || !strings.Contains(got[1], `data-for="toolu_9"`) {
		t.Errorf("call and result cannot be joined by the page: %q", got)
	}
}

func TestLiveStreamEndsOnRevoke(t *testing.T) {
	e := newEnv(t)
	_, events := openStream(t, e, 0)
	if err := e.h.Revoke(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-events:
		if ev.name != "end" {
			t.Fatalf("event = %+v, want end", ev)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the stream of a revoked link goes on")
	}
}

// TestLiveStreamReloadsOnANewConversation: when the session's transcript
// changes (/clear, or Claude's first start), the page is told to reload.
func TestLiveStreamReloadsOnANewConversation(t *testing.T) {
	e := newEnv(t)
	e.h.recheck = 50 * time.Millisecond
	e.sessions.mu.Lock()
	e.sessions.list[0].Transcript = ""
	e.sessions.mu.Unlock()
	_, events := openStream(t, e, 0)
	e.sessions.mu.Lock()
	e.sessions.list[0].Transcript = e.transcript
	e.sessions.mu.Unlock()
	select {
	case ev := <-events:
		if ev.name != "reload" {
			t.Fatalf("event = %+v, want reload", ev)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("no reload when the transcript appeared")
	}
}

// TestSessionLineLongerThanAPage: a line longer than a page (a screenshot
// in a tool result) is passed over with a note, and Earlier still leads
// back to the start.
func TestSessionLineLongerThanAPage(t *testing.T) {
	e := newEnv(t)
	write(t, e.transcript, userLine("EARLY")+replyLine("big", strings.Repeat("x", 2*pageBytes))+userLine("LATE"))
	p := e.path(SessionScope("proj"))
	b := body(t, e.get(t, p))
	if !strings.Contains(b, "LATE") {
		t.Fatal("the page lost the last line")
	}
	for i := 0; i < 5 && !strings.Contains(b, "EARLY"); i++ {
		j := strings.Index(b, `href="./?before=`)
		if j < 0 {
			t.Fatalf("no Earlier link before reaching the start: %q", b)
		}
		q := b[j+len(`href="./`):]
		b = body(t, e.get(t, p+q[:strings.IndexByte(q, '"')]))
		if strings.Contains(b, "xxxxxxxx") && !strings.Contains(b, "more bytes not shown") {
			t.Fatal("the long line is shown whole")
		}
	}
	if !strings.Contains(b, "EARLY") {
		t.Fatal("Earlier never reached the start past the long line")
	}
}

func TestReplyCodeBlocksHighlighted(t *testing.T) {
	e := newEnv(t)
	write(t, e.transcript, replyLine("m", "Here:\n\n```go\nfunc main() {}\n```\n\n```\n<script>x()</script>\n```\n"))
	b := body(t, e.get(t, e.path(SessionScope("proj"))))
	if !strings.Contains(b, `<span class="kd">func</span>`) {
		t.Errorf("the Go block is not highlighted: %q", b)
	}
	if strings.Contains(b, "<script>x") || !strings.Contains(b, "&lt;script&gt;x()&lt;/script&gt;") {
		t.Errorf("the plain block is not escaped text: %q", b)
	}
}

// TestSessionLongLineStillBeingWritten: the page ends where a long line
// still being written starts, so the live stream sends it whole once it
// ends, and Earlier goes straight to the lines before it.
func TestSessionLongLineStillBeingWritten(t *testing.T) {
	e := newEnv(t)
	early := userLine("EARLY")
	write(t, e.transcript, early+strings.Repeat("x", 2*maxPageBytes))
	b := body(t, e.get(t, e.path(SessionScope("proj"))))
	if want := fmt.Sprintf(`data-events="./events?from=%d"`, len(early)); !strings.Contains(b, want) {
		t.Errorf("page lacks %s", want)
	}
	if want := fmt.Sprintf(`href="./?before=%d"`, len(early)); !strings.Contains(b, want) {
		t.Errorf("page lacks %s", want)
	}
}
