// Package discord is ccbridge's Discord REST adapter over discordgo: it builds
// sessions that talk to the configured API base (Discord itself, a proxy, or
// a test server). Only this package and gateway import discordgo.
package discord

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/ccbridge/ccbridge/internal/redact"
)

// DefaultAPIBase is Discord's own origin.
const DefaultAPIBase = "https://discord.com"

// callTimeout bounds one REST call made without a deadline of its own
// (discordgo's gateway lookup, interaction answers). A call with a
// deadline gets all of it: an upload's SendTimeout grows with its size.
var callTimeout = 20 * time.Second

// NewSession returns a discordgo session whose REST calls (and so gateway
// discovery) go to apiBase. discordgo computes its endpoint URLs once at
// init, so the base is applied by rewriting each request's origin in the
// session's HTTP client rather than by changing globals.
func NewSession(apiBase, token string) (*discordgo.Session, error) {
	redact.AddSecret(NormalizeToken(token)) // never posted, whatever the text
	dg, err := discordgo.New("Bot " + NormalizeToken(token))
	if err != nil {
		return nil, fmt.Errorf("discord session: %w", err)
	}
	client, err := HTTPClient(apiBase)
	if err != nil {
		return nil, err
	}
	dg.Client = client
	dg.UserAgent = "DiscordBot (https://github.com/ccbridge/ccbridge, 0) ccbridge"
	return dg, nil
}

// RouteLogs sends discordgo's own log lines (gateway errors, reconnects)
// to log, instead of the standard logger's other format next to slog's.
// discordgo's logger is process-wide: the daemon calls this once.
func RouteLogs(log *slog.Logger) {
	discordgo.Logger = func(level, _ int, format string, a ...any) {
		lv := slog.LevelDebug
		switch level {
		case discordgo.LogError:
			lv = slog.LevelError
		case discordgo.LogWarning:
			lv = slog.LevelWarn
		case discordgo.LogInformational:
			lv = slog.LevelInfo
		}
		log.Log(context.Background(), lv, fmt.Sprintf(format, a...), "from", "discordgo")
	}
}

// restSession is a session for REST calls whose retries the caller bounds:
// discordgo's own would sleep a rate limit's whole retry_after, which could
// hold a hook or a setup step far longer than it may take.
func restSession(apiBase, token string) (*discordgo.Session, error) {
	dg, err := NewSession(apiBase, token)
	if err != nil {
		return nil, err
	}
	dg.ShouldRetryOnRateLimit = false
	dg.MaxRestRetries = 0
	return dg, nil
}

// NormalizeToken returns a bot token without surrounding space and without
// a "Bot " prefix that was pasted with it (ccbridge adds its own: "Bot Bot
// …" gets 401).
func NormalizeToken(token string) string {
	token = strings.TrimSpace(token)
	if len(token) > 4 && strings.EqualFold(token[:4], "bot ") {
		token = strings.TrimSpace(token[4:])
	}
	return token
}

// HTTPClient returns a client that sends Discord API requests to apiBase.
func HTTPClient(apiBase string) (*http.Client, error) {
	apiBase = strings.TrimRight(apiBase, "/")
	if apiBase == "" || apiBase == DefaultAPIBase {
		return &http.Client{Transport: bounded{next: redacting{next: edgeGuard{next: http.DefaultTransport}}}}, nil
	}
	to, err := url.Parse(apiBase)
	if err != nil || (to.Scheme != "http" && to.Scheme != "https") || to.Host == "" {
		return nil, fmt.Errorf("discord api_base %q is not an http(s) URL", apiBase)
	}
	return &http.Client{Transport: bounded{next: redacting{next: edgeGuard{next: rewrite{to: to, next: http.DefaultTransport}}}}}, nil
}

// bounded gives a request without a deadline callTimeout, until its
// response body is closed. It replaces http.Client.Timeout, which would
// cut every call at that time whatever deadline its context gives.
type bounded struct{ next http.RoundTripper }

func (t bounded) RoundTrip(r *http.Request) (*http.Response, error) {
	if _, ok := r.Context().Deadline(); ok {
		return t.next.RoundTrip(r)
	}
	ctx, cancel := context.WithTimeout(r.Context(), callTimeout)
	resp, err := t.next.RoundTrip(r.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// BlockedError is a 429 that did not come from Discord's API (no JSON, no
// retry_after): Cloudflare in front of it has blocked this client for a
// while, typically after too many invalid requests. Retrying at once only
// prolongs the block.
type BlockedError struct {
	RetryAfter time.Duration
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("blocked by Discord's edge (HTTP 429 without a rate limit body); retry after %v", e.RetryAfter)
}

// blockedWait is the wait after an edge 429 that gives no Retry-After.
const blockedWait = 5 * time.Minute

// edgeGuard turns a non-JSON 429 into a BlockedError. discordgo would fail
// to parse it and the caller would retry at once, forever.
type edgeGuard struct{ next http.RoundTripper }

func (t edgeGuard) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if err != nil || resp.StatusCode != http.StatusTooManyRequests || strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		return resp, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	wait := blockedWait
	if s, err := strconv.Atoi(strings.TrimSpace(resp.Header.Get("Retry-After"))); err == nil && s > 0 {
		wait = time.Duration(s) * time.Second
	}
	return nil, &BlockedError{RetryAfter: wait}
}

type rewrite struct {
	to   *url.URL
	next http.RoundTripper
}

// RoundTrip sends the request to the configured origin, keeping its path
// under the base's path prefix.
func (t rewrite) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context()) // a RoundTripper must not modify its request
	r.URL.Scheme, r.URL.Host, r.Host = t.to.Scheme, t.to.Host, t.to.Host
	r.URL.Path = strings.TrimRight(t.to.Path, "/") + r.URL.Path
	r.URL.RawPath = ""
	return t.next.RoundTrip(r)
}
