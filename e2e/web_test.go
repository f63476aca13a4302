//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
)

// freePort is a loopback port free a moment ago, for a daemon's web view.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// eventsRE finds the live stream's start in a session page.
var eventsRE = regexp.MustCompile(`data-events="[^"]*events\?from=(\d+)"`)

// linkOf is the url of a message's first link button.
func linkOf(m *fakediscord.Message) string {
	for _, row := range m.Components {
		cs, _ := row["components"].([]any)
		for _, c := range cs {
			if c, ok := c.(map[string]any); ok {
				if u, ok := c["url"].(string); ok {
					return u
				}
			}
		}
	}
	return ""
}

// The web view over HTTP, served by the daemon (the browser tests come
// with its next block): /web answers the owner alone with the session's
// link; the page shows Claude's reply, and the next reply reaches the
// page's live stream; the diff page shows the changed lines; a tampered
// link and a path out of the folder are refused.
func TestWebViewShowsTheSessionLiveAndItsDiff(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, fmt.Sprintf("[web]\nlisten = \"127.0.0.1:%d\"\n", freePort(t)))
	p := b.projects[0]
	if err := os.WriteFile(filepath.Join(p.dir, "notes.txt"), []byte("first line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitRepo(t, p.dir)
	b.say(p, "hello web")
	b.waitReply(p, "ok: hello web")
	answer := b.command(p, "web", nil, "in the browser")
	link := linkOf(answer)
	if !strings.HasPrefix(link, "http://127.0.0.1:") || !strings.HasSuffix(link, "/") {
		t.Fatalf("no session link in the /web answer: %q %v", answer.Content, answer.Components)
	}
	var from string
	for deadline := time.Now().Add(long); ; time.Sleep(100 * time.Millisecond) {
		code, body := get(t, link)
		if m := eventsRE.FindStringSubmatch(body); code == http.StatusOK && strings.Contains(body, "ok: hello web") && m != nil {
			from = m[1]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the session page (%d) does not show the reply:\n%s", code, body)
		}
	}

	ctx, cancel := context.WithTimeout(t.Context(), long)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, link+"events?from="+from, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("live stream: %d %s", resp.StatusCode, ct)
	}
	b.say(p, "second reply")
	lines := bufio.NewScanner(resp.Body)
	lines.Buffer(make([]byte, 1<<20), 1<<20)
	for lines.Scan() {
		if strings.Contains(lines.Text(), "ok: second reply") {
			break
		}
	}
	if ctx.Err() != nil || lines.Err() != nil {
		t.Fatalf("the next reply never reached the live stream: %v %v", ctx.Err(), lines.Err())
	}

	if err := os.WriteFile(filepath.Join(p.dir, "notes.txt"), []byte("first line\nadded from the session\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, body := get(t, link+"diff"); code != http.StatusOK || !strings.Contains(body, "added from the session") || !strings.Contains(body, "notes.txt") {
		t.Fatalf("the diff page (%d) does not show the change:\n%s", code, body)
	}
	if code, body := get(t, link+"files/notes.txt"); code != http.StatusOK || !strings.Contains(body, "added from the session") {
		t.Fatalf("the files page (%d) does not show notes.txt:\n%s", code, body)
	}
	for _, out := range []string{"files/..%2f..%2fconfig.toml", "files/%2e%2e/%2e%2e/config.toml"} {
		if code, body := get(t, link+out); code == http.StatusOK || strings.Contains(body, "api_base") {
			t.Fatalf("%s was served (%d):\n%s", out, code, body)
		}
	}
	i := strings.Index(link, "/s/") + 5 // a character inside the token
	flip := "A"
	if link[i] == 'A' {
		flip = "B"
	}
	tampered := link[:i] + flip + link[i+1:]
	if code, body := get(t, tampered); code != http.StatusForbidden || strings.Contains(body, "hello web") {
		t.Fatalf("a tampered link got %d:\n%s", code, body)
	}
}
