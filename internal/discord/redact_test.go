package discord

import (
	"context"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/redact"
)

// capture is a Discord stand-in that records each request body.
func capture(t *testing.T) (*httptest.Server, func() []string) {
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		text := string(b)
		if mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "multipart/form-data" {
			text = ""
			rd := multipart.NewReader(strings.NewReader(string(b)), params["boundary"])
			for {
				p, err := rd.NextPart()
				if err != nil {
					break
				}
				d, _ := io.ReadAll(p)
				text += "[" + p.FormName() + ":" + p.FileName() + "]" + string(d)
			}
		}
		mu.Lock()
		bodies = append(bodies, text)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"1","channel_id":"2"}`)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), bodies...) }
}

func TestEveryPostIsRedacted(t *testing.T) {
	srv, bodies := capture(t)
	token := "MTAxNzY1NDMyMTAxNzY1NDMy.GaBc12.config-bot-token-xyz_0123456789abcdef"
	p, err := NewPoster(srv.URL, token)
	if err != nil {
		t.Fatal(err)
	}
	gh := "ghp_" + strings.Repeat("A1b2C3d4E5", 4)[:36]
	ctx := context.Background()
	if _, err := p.Send(ctx, "2", "the key is "+gh+" and the bot's is "+token, nil); err != nil {
		t.Fatal(err)
	}
	if err := p.Edit(ctx, "2", "1", chat.Message{Content: "edited " + gh}); err != nil {
		t.Fatal(err)
	}
	files := []chat.File{{Name: "clean.txt", Data: []byte("nothing here")}, {Name: "env.txt", Data: []byte("GITHUB_TOKEN=" + gh)}}
	if _, err := p.Send(ctx, "2", "files "+gh, files); err != nil {
		t.Fatal(err)
	}
	got := bodies()
	if len(got) != 3 {
		t.Fatalf("%d requests", len(got))
	}
	for _, b := range got {
		if strings.Contains(b, gh) || strings.Contains(b, token) {
			t.Errorf("a secret reached Discord: %s", b)
		}
		if !strings.Contains(b, "[redacted GitHub token]") {
			t.Errorf("no mask in %s", b)
		}
	}
	if !strings.Contains(got[0], "[redacted bot token]") {
		t.Errorf("the bot token is not masked: %s", got[0])
	}
	if !strings.Contains(got[2], "[files[0]:clean.txt]nothing here") || strings.Contains(got[2], ":env.txt]") {
		t.Errorf("the clean file must go and the secret one stay back: %s", got[2])
	}
	if !strings.Contains(got[2], "`env.txt` was held back") {
		t.Errorf("no notice for the held-back file: %s", got[2])
	}
}

// Chunks measures text after redaction: 100 lines of password=hunter2 fit
// one message as written, but not once each is masked.
func TestChunksFitAfterRedaction(t *testing.T) {
	text := strings.TrimSpace(strings.Repeat("password=hunter2\n", 100))
	if n := len(text); n > chat.Limit {
		t.Fatalf("the test text has %d characters: it must fit before redaction", n)
	}
	chunks := Chunks(text)
	joined := strings.Join(chunks, "\n")
	if n := strings.Count(joined, "password=[redacted secret]"); n != 100 || strings.Contains(joined, "hunter2") {
		t.Fatalf("%d masked lines of 100 in %q", n, joined)
	}
	for i, c := range chunks {
		if n := len([]rune(redact.String(c))); n > chat.Limit {
			t.Errorf("chunk %d has %d characters as posted", i, n)
		}
	}
	// A line longer than a message is cut inside it, here just before
	// "password=", which then starts a key (inside "apassword" it did
	// not): a piece that its own redaction grows past the limit is split
	// again.
	long := strings.Repeat("a", 1996) + "password=abc1;" + strings.Repeat("b", 1982)
	for i, c := range Chunks(long) {
		if n := len([]rune(redact.String(c))); n > chat.Limit {
			t.Errorf("long line: chunk %d has %d characters as posted", i, n)
		}
	}
}

// What the HTTP client masks again at send time must neither change nor
// grow a chunk, even where the cut itself makes a new match.
func TestChunksAreStableAtSend(t *testing.T) {
	for name, text := range map[string]string{
		"masks longer than secrets": strings.Repeat("password=hunter2\n", 300),
		// No space to cut at: the cut falls just before "token", which
		// then starts a word and a key, and a short secret.
		"cut makes a key": strings.Repeat("a", 1996) + "token=abcd;" + strings.Repeat("z", 1980),
		"in a code block": "```sh\n" + strings.Repeat("export API_KEY=abcd1234 # x\n", 150) + "```",
	} {
		for i, c := range Chunks(text) {
			if n := len([]rune(c)); n > chat.Limit {
				t.Errorf("%s: chunk %d has %d characters", name, i, n)
			}
			if m := redact.String(c); m != c {
				t.Errorf("%s: chunk %d changes at send (%d → %d characters)", name, i, len([]rune(c)), len([]rune(m)))
			}
		}
	}
}

// A message that its masks make longer than 2,000 characters is cut, not
// refused whole: top-level content, and an interaction response's.
func TestMaskedContentIsClippedToTheLimit(t *testing.T) {
	text := strings.Repeat("x", 1980) + " password=hunter22"
	for _, doc := range []map[string]any{{"content": text}, {"type": 4, "data": map[string]any{"content": text}}} {
		b, _ := json.Marshal(doc)
		var out map[string]any
		if err := json.Unmarshal(redactJSON(b, nil), &out); err != nil {
			t.Fatal(err)
		}
		c, _ := out["content"].(string)
		if d, ok := out["data"].(map[string]any); ok {
			c, _ = d["content"].(string)
		}
		if n := utf8.RuneCountInString(c); n > chat.Limit || strings.Contains(c, "hunter22") || !strings.HasSuffix(c, "…") {
			t.Fatalf("content of %d characters: …%q", n, c[len(c)-40:])
		}
	}
}
