package faketelegram

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// reply is a Bot API answer.
type reply struct {
	Status      int
	OK          bool            `json:"ok"`
	Result      json.RawMessage `json:"result"`
	ErrorCode   int             `json:"error_code"`
	Description string          `json:"description"`
	Parameters  struct {
		RetryAfter int `json:"retry_after"`
	} `json:"parameters"`
	Header http.Header
}

func (r reply) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Result, v); err != nil {
		t.Fatalf("decode result %s: %v", r.Result, err)
	}
}

func do(t *testing.T, req *http.Request) reply {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	r := reply{Status: resp.StatusCode, Header: resp.Header}
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("%s: not JSON: %q", req.URL, body)
	}
	return r
}

// call sends a JSON body to a method.
func call(t *testing.T, s *Server, method string, body any) reply {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/bot"+s.Token+"/"+method, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	return do(t, req)
}

// form sends an url-encoded body.
func form(t *testing.T, s *Server, method string, v url.Values) reply {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/bot"+s.Token+"/"+method, strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return do(t, req)
}

// ok calls a method that must succeed and decodes its result into v.
func ok(t *testing.T, s *Server, method string, body, v any) {
	t.Helper()
	r := call(t, s, method, body)
	if r.Status != 200 || !r.OK {
		t.Fatalf("%s %v: %d %s", method, body, r.Status, r.Description)
	}
	if v != nil {
		r.decode(t, v)
	}
}

// refused calls a method Telegram refuses and checks the answer.
func refused(t *testing.T, s *Server, method string, body any, code int, desc string) {
	t.Helper()
	s.RefusalsExpected.Store(true)
	defer s.RefusalsExpected.Store(false)
	r := call(t, s, method, body)
	if r.Status != code || r.OK || r.ErrorCode != code || r.Description != desc {
		t.Fatalf("%s %v: got %d %+v %q, want %d %q", method, body, r.Status, r.OK, r.Description, code, desc)
	}
}

func send(t *testing.T, s *Server, body map[string]any) Message {
	t.Helper()
	if _, ok := body["chat_id"]; !ok {
		body["chat_id"] = s.ChatID
	}
	var m Message
	ok(t, s, "sendMessage", body, &m)
	return m
}

// recorder catches what the fake reports to its test.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recorder) reported() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errs...)
}

func keyboard(rows ...[]map[string]any) map[string]any {
	return map[string]any{"inline_keyboard": rows}
}

func cb(text, data string) map[string]any { return map[string]any{"text": text, "callback_data": data} }
