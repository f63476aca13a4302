// Package fakediscord is a fake Discord on loopback for tests: a real,
// unmodified discordgo Session connects to it (REST over http, the gateway
// over ws) through the ordinary [discord].api_base setting. It hosts several
// bots, each with its own guild, and offers a test-side API to inject what
// people do (messages with attachments, clicks, selects, modal submits,
// slash commands, thread starts, renames, archives and deletes, system
// messages), to inject faults (5xx, 429, gateway drops, requests that are
// processed and then fail, slow uploads), and to read back everything the
// bots did. It enforces Discord's rules with Discord's error codes
// (rules.go) and honours gateway intents (intents.go). See
// docs/fake-discord.md for the protocol facts it follows.
package fakediscord

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Bot is one bot application with its guild.
type Bot struct {
	Name      string
	Token     string
	UserID    string // == application id
	GuildID   string
	ChannelID string // the guild's first text channel
	// DenyMessageContent models a bot whose Message Content intent is not
	// enabled in the developer portal: IDENTIFY with that intent is closed
	// with 4014 (Disallowed intent(s)). Set it before the bot connects.
	DenyMessageContent bool
}

// User is a Discord user that tests act as.
type User struct {
	ID   string
	Name string
	Bot  bool
}

// Call is one REST call a bot made.
type Call struct {
	Method string
	Path   string
	Status int
	Bot    string // bot name, or "" for token-authenticated routes
}

// Stats counts gateway activity.
type Stats struct {
	Connects, Identifies, Resumes, Heartbeats, RateLimited, Failed int
	LastIntents                                                    int
}

// Server is the fake.
type Server struct {
	URL string // http://127.0.0.1:port
	// HeartbeatInterval is sent in HELLO.
	HeartbeatInterval time.Duration
	// InteractionTTL is how long an interaction may wait for its callback.
	InteractionTTL time.Duration
	// TokenTTL is how long an interaction token works for @original and
	// followups (Discord: 15 minutes); then they answer 401 50027.
	TokenTTL time.Duration
	// InvalidBodiesExpected lets a test send bodies Discord's schema refuses
	// (to see the 400 50035 handled); otherwise each one also fails the test.
	InvalidBodiesExpected atomic.Bool

	t   testing.TB
	ts  *httptest.Server
	ids atomic.Int64

	mu           sync.Mutex // guards everything below
	changed      chan struct{}
	bots         []*Bot
	channels     map[string]*Channel
	messages     map[string]*Message // by id
	order        map[string][]string // channel id → message ids in order
	commands     map[string][]json.RawMessage
	interactions map[string]*Interaction // by token
	calls        []Call
	faults       []*fault
	sessions     map[string]*gwSession // gateway sessions by id
	stats        Stats
	attachments  map[string][]byte // attachment path → bytes
	uploadRate   int               // multipart bytes per second, 0 = unlimited
	closed       bool
	apps         map[*Bot]*appState
	starts       map[*Bot]*startLimit // session starts left (startlimit.go)
}

// New starts a fake with one bot ("main") and registers its shutdown with
// t.Cleanup. Register a session's Close after New so it runs first.
func New(t testing.TB) *Server {
	s := &Server{
		HeartbeatInterval: 41250 * time.Millisecond,
		InteractionTTL:    3 * time.Second,
		TokenTTL:          15 * time.Minute,
		t:                 t,
		changed:           make(chan struct{}),
		channels:          map[string]*Channel{},
		messages:          map[string]*Message{},
		order:             map[string][]string{},
		commands:          map[string][]json.RawMessage{},
		interactions:      map[string]*Interaction{},
		sessions:          map[string]*gwSession{},
		attachments:       map[string][]byte{},
	}
	s.ids.Store(1_300_000_000_000_000_000)
	mux := http.NewServeMux()
	mux.HandleFunc("/gateway", s.serveGateway)
	mux.HandleFunc("/gateway/", s.serveGateway)
	mux.HandleFunc("/attachments/", s.serveAttachment)
	mux.HandleFunc("/api/", s.serveREST)
	s.ts = httptest.NewServer(mux)
	s.URL = s.ts.URL
	t.Cleanup(s.Close)
	s.NewBot("main")
	return s
}

// Close stops the fake, closing every gateway connection.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	var conns []*gwConn
	for _, sess := range s.sessions {
		if sess.conn != nil {
			conns = append(conns, sess.conn)
		}
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.close()
	}
	s.ts.CloseClientConnections()
	s.ts.Close()
}

// Main returns the first bot.
func (s *Server) Main() *Bot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bots[0]
}

// NewBot adds a bot application with its own guild and a text channel.
func (s *Server) NewBot(name string) *Bot {
	b := &Bot{Name: name, Token: "fake-token-" + name + "-" + s.id(), UserID: s.id(), GuildID: s.id()}
	s.mu.Lock()
	s.bots = append(s.bots, b)
	s.mu.Unlock()
	b.ChannelID = s.AddChannel(b.GuildID, "general")
	return b
}

// AddChannel adds a text channel to a guild and returns its id.
func (s *Server) AddChannel(guildID, name string) string {
	c := &Channel{ID: s.id(), GuildID: guildID, Type: 0, Name: name}
	s.mu.Lock()
	s.channels[c.ID] = c
	s.mu.Unlock()
	return c.ID
}

// id returns a fresh snowflake.
func (s *Server) id() string { return strconv.FormatInt(s.ids.Add(1), 10) }

// notify wakes waiters; the caller holds s.mu.
func (s *Server) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// waitFor polls cond under the lock, waking on every change, until it is
// true or the timeout passes.
func (s *Server) waitFor(timeout time.Duration, cond func() bool) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		ok := cond()
		ch := s.changed
		s.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-ch:
		case <-deadline.C:
			return false
		}
	}
}

// botByToken finds the bot for an Authorization header or IDENTIFY token;
// Discord accepts the token with or without the "Bot " prefix.
func (s *Server) botByToken(tok string) *Bot {
	tok = strings.TrimPrefix(tok, "Bot ")
	for _, b := range s.bots {
		if b.Token == tok {
			return b
		}
	}
	return nil
}

func (s *Server) botByGuild(guildID string) *Bot {
	for _, b := range s.bots {
		if b.GuildID == guildID {
			return b
		}
	}
	return nil
}

// Calls returns every REST call so far.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// Stats returns gateway counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// fault is an injected failure for matching REST calls.
type fault struct {
	method, glob string
	status       int
	retryAfter   float64
	left         int
	// after: process the call first, then answer status (created, then 5xx).
	after bool
}

// Fail makes the next n calls matching method and glob (path below
// /api/vN, * matches one segment) answer HTTP status.
func (s *Server) Fail(method, glob string, status, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &fault{method: method, glob: glob, status: status, left: n})
}

// RateLimit makes the next n matching calls answer 429 with retry_after.
func (s *Server) RateLimit(method, glob string, n int, retryAfter time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &fault{method: method, glob: glob, status: 429, retryAfter: retryAfter.Seconds(), left: n})
}

// takeFault returns the fault for a call, consuming one use; caller holds s.mu.
func (s *Server) takeFault(method, p string) *fault {
	for _, f := range s.faults {
		if f.left == 0 || f.method != method {
			continue
		}
		if ok, _ := path.Match(f.glob, p); ok {
			f.left--
			return f
		}
	}
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if v != nil {
		_ = json.NewEncoder(w).Encode(v)
	}
}

func apiError(w http.ResponseWriter, status, code int, msg string) {
	writeJSON(w, status, map[string]any{"code": code, "message": msg})
}

func (s *Server) fatalf(format string, args ...any) {
	s.t.Helper()
	s.t.Fatalf("fakediscord: "+format, args...)
}

func timestamp() string { return time.Now().UTC().Format(time.RFC3339Nano) }

func userJSON(u User) map[string]any {
	return map[string]any{"id": u.ID, "username": u.Name, "global_name": u.Name, "discriminator": "0", "avatar": nil, "bot": u.Bot}
}

func (b *Bot) user() User { return User{ID: b.UserID, Name: b.Name + "-bot", Bot: true} }

func (s *Server) String() string { return fmt.Sprintf("fakediscord(%s)", s.URL) }
