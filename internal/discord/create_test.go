package discord

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
)

// nonceServer is a message-create endpoint that behaves as Discord does
// with nonce + enforce_nonce, and can create a message and then answer 5xx
// (the response lost on a slow link).
type nonceServer struct {
	*httptest.Server
	mu       sync.Mutex
	created  []string          // contents, in order
	byNonce  map[string]string // nonce → message id
	nonces   []string          // nonce of every create call
	failNext int               // creates that succeed but answer 502
}

func newNonceServer(t *testing.T) *nonceServer {
	s := &nonceServer{byNonce: map[string]string{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "POST" || !strings.HasSuffix(r.URL.Path, "/messages") {
			http.Error(w, `{"message":"no route","code":0}`, 404)
			return
		}
		var body struct {
			Content      string          `json:"content"`
			Nonce        json.RawMessage `json:"nonce"`
			EnforceNonce bool            `json:"enforce_nonce"`
		}
		raw, err := payload(r)
		if err == nil {
			err = json.Unmarshal(raw, &body)
		}
		if err != nil {
			http.Error(w, `{"message":"bad body","code":50109}`, 400)
			return
		}
		var nonce string
		_ = json.Unmarshal(body.Nonce, &nonce)
		s.mu.Lock()
		defer s.mu.Unlock()
		s.nonces = append(s.nonces, nonce)
		w.Header().Set("Content-Type", "application/json")
		id, seen := s.byNonce[nonce]
		if !(seen && body.EnforceNonce && nonce != "") {
			id = fmt.Sprint(1000 + len(s.created))
			s.created = append(s.created, body.Content)
			if nonce != "" {
				s.byNonce[nonce] = id
			}
		}
		if s.failNext > 0 {
			s.failNext--
			w.WriteHeader(502)
			io.WriteString(w, `<html>502 Bad Gateway</html>`)
			return
		}
		fmt.Fprintf(w, `{"id":%q,"channel_id":"1","content":%q}`, id, body.Content)
	}))
	t.Cleanup(s.Close)
	return s
}

// payload returns a create's JSON: the body, or the payload_json part.
func payload(r *http.Request) ([]byte, error) {
	mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "multipart/form-data" {
		return io.ReadAll(r.Body)
	}
	mr := multipart.NewReader(r.Body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if err != nil {
			return nil, err
		}
		if p.FormName() == "payload_json" {
			return io.ReadAll(p)
		}
	}
}

func (s *nonceServer) poster(t *testing.T) *Poster {
	p, err := NewPoster(s.URL, "tok")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A create that Discord performed but answered with a 502 is retried with
// the same nonce, so the message exists once.
func TestCreateAnswered502IsNotPostedTwice(t *testing.T) {
	for _, withFile := range []bool{false, true} {
		t.Run(fmt.Sprint("file=", withFile), func(t *testing.T) {
			s := newNonceServer(t)
			s.failNext = 1
			var fs []chat.File
			if withFile {
				fs = []chat.File{{Name: "a.txt", Data: []byte("A")}}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			id, err := s.poster(t).Send(ctx, "1", "hello", fs)
			if err != nil {
				t.Fatal(err)
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			if len(s.created) != 1 || id != "1000" {
				t.Fatalf("created %q (id %s); want one message", s.created, id)
			}
			if len(s.nonces) != 2 || s.nonces[0] == "" || s.nonces[0] != s.nonces[1] || len(s.nonces[0]) > 25 {
				t.Fatalf("nonces = %q; want the same nonce (≤25 chars) on both attempts", s.nonces)
			}
		})
	}
}

// Callers that retry later (the outbox) pass a nonce derived from a stable
// key: a second create with it is the first message.
func TestSendOnceWithAKeyedNonce(t *testing.T) {
	s := newNonceServer(t)
	p := s.poster(t)
	n := Nonce("00000000001763900000000000-123-000001")
	if n != Nonce("00000000001763900000000000-123-000001") || n == Nonce("00000000001763900000000000-123-000002") || len(n) > 25 || n == "" {
		t.Fatalf("Nonce is not a stable ≤25-char digest: %q", n)
	}
	ctx := context.Background()
	id1, err1 := p.SendOnce(ctx, "1", n, "hello", nil)
	id2, err2 := p.SendOnce(ctx, "1", n, "hello", nil)
	if err1 != nil || err2 != nil || id1 != id2 || len(s.created) != 1 {
		t.Fatalf("ids %s %s, errs %v %v, created %q", id1, id2, err1, err2, s.created)
	}
}
