// Package telegram is ccbridge's Telegram front end: a Bot API client over
// net/http, a chat.Poster over it (forum topics as channels, inline
// keyboards as components, ForceReply as forms), and a Bot that long-polls
// getUpdates and hands chat events to the core.
package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/redact"
)

// DefaultAPIBase is Telegram's Bot API root.
const DefaultAPIBase = "https://api.telegram.org"

// Client calls the Bot API for one bot. Its token is part of every URL
// Telegram serves, so no error it returns names a URL with it.
type Client struct {
	base  string
	token string
	http  *http.Client
}

// NewClient returns a client of the Bot API at apiBase ("" for Telegram's).
func NewClient(apiBase, token string) (*Client, error) {
	if strings.TrimSpace(token) == "" {
		return nil, fmt.Errorf("telegram: no bot token")
	}
	if apiBase == "" {
		apiBase = DefaultAPIBase
	}
	u, err := url.Parse(apiBase)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("telegram: api_base %q is not an http(s) URL", apiBase)
	}
	// The token is masked wherever it would be posted (a reply quoting it).
	redact.AddSecret(token)
	// No client timeout: each call is bounded by its context (a long poll
	// waits far longer than a send may).
	return &Client{base: strings.TrimRight(apiBase, "/"), token: token, http: &http.Client{}}, nil
}

// APIError is Telegram's refusal of a call.
type APIError struct {
	Method      string
	Code        int // error_code (the HTTP status)
	Description string
	Wait        time.Duration // parameters.retry_after
}

func (e *APIError) Error() string {
	return fmt.Sprintf("telegram %s: %d %s", e.Method, e.Code, e.Description)
}

// RetryAfter implements chat.RetryAfterError.
func (e *APIError) RetryAfter() time.Duration { return e.Wait }

// Telegram's descriptions of a message, topic or chat that is not there.
var goneTexts = []string{"message to edit not found", "message to delete not found", "message to react not found",
	"message to be replied not found", "message thread not found", "chat not found", "topic_deleted", "message can't be edited"}

// Is maps Telegram's answers to chat's meanings.
func (e *APIError) Is(target error) bool {
	desc := strings.ToLower(e.Description)
	switch target {
	case chat.ErrTransient:
		return e.Code == http.StatusTooManyRequests || e.Code >= 500
	case chat.ErrAuth:
		return e.Code == http.StatusUnauthorized
	case chat.ErrMissingPermission:
		return e.Code == http.StatusForbidden || strings.Contains(desc, "not enough rights") || strings.Contains(desc, "chat_admin_required")
	case chat.ErrUnknownMessage:
		if e.Code != http.StatusBadRequest {
			return false
		}
		for _, t := range goneTexts {
			if strings.Contains(desc, t) {
				return true
			}
		}
	}
	return false
}

// notModified reports Telegram's refusal of an edit that changes nothing.
func notModified(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && strings.Contains(ae.Description, "message is not modified")
}

// NetError is a call that got no answer from Telegram: the network, a
// timeout, a cancelled context. It matches chat.ErrTransient.
type NetError struct {
	Method string
	Err    error // its URL redacted
	// Sent: the request may have reached Telegram (a create may have
	// been made).
	Sent bool
}

func (e *NetError) Error() string        { return fmt.Sprintf("telegram %s: %v", e.Method, e.Err) }
func (e *NetError) Unwrap() error        { return e.Err }
func (e *NetError) Is(target error) bool { return target == chat.ErrTransient }

// redact removes the token from err's text: a *url.Error names the URL,
// which holds it.
func (c *Client) redact(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		ue.URL = strings.ReplaceAll(ue.URL, c.token, "<token>")
	}
	if strings.Contains(err.Error(), c.token) {
		return errors.New(strings.ReplaceAll(err.Error(), c.token, "<token>"))
	}
	return err
}

type envelope struct {
	OK          bool            `json:"ok"`
	Result      json.RawMessage `json:"result"`
	ErrorCode   int             `json:"error_code"`
	Description string          `json:"description"`
	Parameters  *struct {
		RetryAfter int `json:"retry_after"`
	} `json:"parameters"`
}

// maxAnswer bounds a Bot API answer read into memory (a getUpdates batch
// of 100 long messages is far smaller).
const maxAnswer = 32 << 20

// once makes one call of method with a JSON body and decodes its result
// into out (nil: ignored).
func (c *Client) once(ctx context.Context, method string, params any, out any) error {
	body, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("telegram %s: encode: %w", method, err)
	}
	return c.post(ctx, method, "application/json", masked(body), out)
}

// masked is a JSON body with every secret in its strings masked: every
// text ccbridge sends to Telegram passes here, whoever built it (replies,
// cards, forms, notices), as every Discord request passes its transport.
func masked(body []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return body
	}
	v, changed := redact.Walk(v)
	if !changed {
		return body
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return body
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// ErrSecretInFile refuses an upload whose file holds a secret: it is left
// out, and the caller says so where the file would have been.
var ErrSecretInFile = errors.New("the file holds a secret")

func (c *Client) post(ctx context.Context, method, contentType string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/bot"+c.token+"/"+method, bytes.NewReader(body))
	if err != nil {
		return &NetError{Method: method, Err: c.redact(err)}
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := c.http.Do(req)
	if err != nil {
		return &NetError{Method: method, Err: c.redact(err), Sent: !dialFailed(err)}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return &NetError{Method: method, Err: c.redact(err), Sent: true}
	}
	var env envelope
	if err := json.Unmarshal(raw, &env); err != nil {
		if resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests {
			return &APIError{Method: method, Code: resp.StatusCode, Description: http.StatusText(resp.StatusCode)}
		}
		return fmt.Errorf("telegram %s: HTTP %d, not a Bot API answer", method, resp.StatusCode)
	}
	if !env.OK {
		e := &APIError{Method: method, Code: env.ErrorCode, Description: strings.ReplaceAll(env.Description, c.token, "<token>")}
		if e.Code == 0 {
			e.Code = resp.StatusCode
		}
		if env.Parameters != nil && env.Parameters.RetryAfter > 0 {
			e.Wait = time.Duration(env.Parameters.RetryAfter) * time.Second
		}
		return e
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(env.Result, out); err != nil {
		return fmt.Errorf("telegram %s: decode the result: %w", method, err)
	}
	return nil
}

// dialFailed reports a request that never left: no connection was made.
func dialFailed(err error) bool {
	var ne *net.OpError
	return errors.As(err, &ne) && ne.Op == "dial"
}

// retryBase is the first backoff after a failure without retry_after.
const retryBase = 200 * time.Millisecond

// call makes a call, retrying within ctx what may be retried: a 429 always
// (Telegram did nothing and says when to come back), other transient
// failures only for a call that changes nothing when made twice
// (idempotent): a sendMessage answered late may have been made, and a
// second would double it. A failure it gives up on is returned as is; one
// that outlasts ctx keeps the wait Telegram asked for (chat.RetryAfter).
func (c *Client) call(ctx context.Context, method string, params, out any, idempotent bool) error {
	return retry(ctx, idempotent, func() error { return c.once(ctx, method, params, out) })
}

// retry runs fn until it succeeds or fails in a way that must not be
// retried (see call), or ctx would end before the next try.
func retry(ctx context.Context, idempotent bool, fn func() error) error {
	for attempt := 0; ; attempt++ {
		err := fn()
		if err == nil {
			return nil
		}
		wait, again := retryable(err, idempotent, retryBase<<min(attempt, 5))
		if !again || ctx.Err() != nil {
			return err
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return err
		}
	}
}

// retryable says whether err may be retried and after how long.
func retryable(err error, idempotent bool, backoff time.Duration) (time.Duration, bool) {
	var ae *APIError
	if errors.As(err, &ae) {
		switch {
		case ae.Code == http.StatusTooManyRequests:
			return max(ae.Wait, backoff), true
		case ae.Code >= 500:
			return backoff, idempotent
		}
		return 0, false
	}
	var ne *NetError
	if errors.As(err, &ne) {
		return backoff, idempotent || !ne.Sent
	}
	return 0, false
}

// upload is a multipart call with one file.
func (c *Client) upload(ctx context.Context, method string, fields map[string]string, fileField, name string, data []byte, out any) error {
	if _, found := redact.Find(string(data)); len(found) > 0 {
		return fmt.Errorf("telegram %s %s: %w (%s)", method, name, ErrSecretInFile, strings.Join(found, ", "))
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range fields {
		if err := mw.WriteField(k, redact.String(v)); err != nil {
			return fmt.Errorf("telegram %s: encode: %w", method, err)
		}
	}
	fw, err := mw.CreateFormFile(fileField, name)
	if err != nil {
		return fmt.Errorf("telegram %s: encode: %w", method, err)
	}
	if _, err := fw.Write(data); err != nil {
		return fmt.Errorf("telegram %s: encode: %w", method, err)
	}
	if err := mw.Close(); err != nil {
		return fmt.Errorf("telegram %s: encode: %w", method, err)
	}
	return c.post(ctx, method, mw.FormDataContentType(), body.Bytes(), out)
}

// download fetches a file path getFile gave, at most limit bytes.
func (c *Client) download(ctx context.Context, path string, limit int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/file/bot"+c.token+"/"+strings.TrimLeft(path, "/"), nil)
	if err != nil {
		return nil, fmt.Errorf("download: %w", c.redact(err))
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, &NetError{Method: "download", Err: c.redact(err), Sent: true}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("download: HTTP %d", resp.StatusCode)
	}
	var buf bytes.Buffer
	n, err := buf.ReadFrom(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, &NetError{Method: "download", Err: c.redact(err), Sent: true}
	}
	if n > limit {
		return nil, fmt.Errorf("download: larger than %d bytes", limit)
	}
	return buf.Bytes(), nil
}
