package discord

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/redact"
)

// redacting masks secrets in every request body ccbridge sends to Discord.
// It sits in the HTTP client that every discordgo session of ccbridge uses
// (the hooks' posters and the daemon's gateway bots alike), so it is the
// one place that every outgoing text passes, whichever code built it:
// replies, progress, cards and their edits, interaction responses (/screen,
// /diff, /audit), modals, mirrored prompts. Attached files are scanned too:
// one that holds a secret is left out and the message says so.
type redacting struct{ next http.RoundTripper }

func (t redacting) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body == nil || r.Body == http.NoBody || r.Method == http.MethodGet || r.Method == http.MethodDelete {
		return t.next.RoundTrip(r)
	}
	body, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("read request body: %w", err)
	}
	ct := r.Header.Get("Content-Type")
	out := body
	mt, params, _ := mime.ParseMediaType(ct)
	switch mt {
	case "application/json":
		out = redactJSON(body, nil)
	case "multipart/form-data":
		// Fail closed: a body that cannot be checked is not sent.
		if out, err = redactMultipart(body, params["boundary"]); err != nil {
			return nil, fmt.Errorf("redact upload: %w", err)
		}
	}
	r = r.Clone(r.Context()) // a RoundTripper must not modify its request
	r.Body = io.NopCloser(bytes.NewReader(out))
	r.ContentLength = int64(len(out))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(out)), nil }
	return t.next.RoundTrip(r)
}

// redactJSON masks secrets in every string of a JSON document; notices are
// appended to its top-level content. It returns b itself when nothing
// changed or b is not JSON.
func redactJSON(b []byte, notices []string) []byte {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return b
	}
	v, changed := redact.Walk(v)
	if changed {
		clipContent(v)
	}
	if len(notices) > 0 {
		if m, ok := v.(map[string]any); ok {
			content, _ := m["content"].(string)
			m["content"] = withNotices(content, notices)
			changed = true
		}
	}
	if !changed {
		return b
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return b
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// clipContent cuts a message's content (or an interaction response's) that
// masks made longer than Discord's 2,000 characters: the text chunkers
// mask before they cut, but a reply built elsewhere (a /screen, a card's
// edit) may not, and a message shortened beats one refused whole.
func clipContent(v any) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	if c, ok := m["content"].(string); ok {
		m["content"] = clip(c)
	}
	if d, ok := m["data"]; ok {
		clipContent(d)
	}
}

// clip cuts s to Discord's limit, marking the cut.
func clip(s string) string {
	if utf8.RuneCountInString(s) > chat.Limit {
		return string([]rune(s)[:chat.Limit-1]) + "…"
	}
	return s
}

// withNotices puts the notices first and keeps the content within
// Discord's limit.
func withNotices(content string, notices []string) string {
	s := strings.Join(notices, "\n")
	if content != "" {
		s += "\n" + content
	}
	return clip(s)
}

// redactMultipart rebuilds a message with files: payload_json is masked,
// and a file that holds a secret is held back with a notice.
func redactMultipart(body []byte, boundary string) ([]byte, error) {
	if boundary == "" {
		return nil, fmt.Errorf("no boundary")
	}
	type part struct {
		header map[string][]string
		name   string
		file   string
		data   []byte
	}
	var parts []part
	rd := multipart.NewReader(bytes.NewReader(body), boundary)
	for {
		p, err := rd.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(p)
		if err != nil {
			return nil, err
		}
		parts = append(parts, part{header: p.Header, name: p.FormName(), file: p.FileName(), data: data})
	}
	var notices []string
	kept := parts[:0]
	for _, p := range parts {
		if p.file != "" {
			if _, found := redact.Find(string(p.data)); len(found) > 0 {
				notices = append(notices, fmt.Sprintf("🔒 `%s` was held back: it contains a secret (%s).", p.file, strings.Join(found, ", ")))
				continue
			}
		}
		kept = append(kept, p)
	}
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	if err := w.SetBoundary(boundary); err != nil {
		return nil, err
	}
	for _, p := range kept {
		data := p.data
		if p.name == "payload_json" {
			data = redactJSON(data, notices)
		}
		pw, err := w.CreatePart(p.header)
		if err != nil {
			return nil, err
		}
		if _, err := pw.Write(data); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Chunks splits text into messages that Discord takes whole after the
// redaction every message goes through on its way there (see
// chat.ChunkMasked).
func Chunks(text string) []string {
	return chat.ChunkMasked(text, chat.Limit, redact.String)
}
