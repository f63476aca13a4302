// Package mcp is ccbridge's MCP front end: a stdio MCP server whose tools
// start Claude Code sessions in ccbridge's tmux server, talk to them, watch
// them and answer their prompts. It works on the very sessions, hooks and
// request records the Discord front end uses (internal/session for the
// panes, internal/prompt for answers, internal/state for records) and
// imports nothing of Discord.
package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
)

// KeyPrefix starts the session key of every session this front end starts
// or resumes. Discord's keys are <server>-<project>[-<thread>], and server
// names hold no "@": the two never collide.
const KeyPrefix = "mcp@"

// TmuxSession is the tmux session MCP-started Claude windows live in.
const TmuxSession = "ccbridge-mcp"

// Who is how a decision made here is credited on a Discord card.
const Who = "an MCP client"

// Via marks a request decided here.
const Via = "mcp"

// Sessions is what the server needs of internal/session.
type Sessions interface {
	Ensure(ctx context.Context, t session.Target) (string, bool, error)
	Deliver(ctx context.Context, key, text string) (time.Time, error)
	WaitReceipt(ctx context.Context, key string, since time.Time, text string, timeout time.Duration) error
	PressEnter(ctx context.Context, key string) error
	Screen(ctx context.Context, key string, lines int) (string, error)
	InterruptTurn(ctx context.Context, key string) error
	SetMode(ctx context.Context, key, mode string) error
	Status(ctx context.Context, key string) (session.Status, error)
}

// Options configure a Server.
type Options struct {
	Config   *config.Config
	Store    *state.Store
	Sessions Sessions
	Log      *slog.Logger
	// ClaudeHome is Claude Code's config dir (~/.claude), whose projects/
	// holds every session's transcript.
	ClaudeHome string
	// CodexHome is Codex's home ($CODEX_HOME, ~/.codex), whose sessions/
	// holds every conversation's rollout.
	CodexHome string
	// SessionIDWait bounds the wait for a new Claude's SessionStart hook.
	SessionIDWait time.Duration
	// Version is ccbridge's, for the client (serverInfo.version).
	Version string
	// Registry holds the Discord front end's sessions, whose conversations
	// this one must not resume (nil: none).
	Registry *state.Registry
	// Web makes links to the web view (nil: the view is off).
	Web Web
}

// Web makes a link to a session's pages in the web view, a capability
// valid until expires. The daemon's adapter is web.Links.
type Web interface {
	SessionLink(key string) (url string, expires time.Time)
}

// Server is the MCP front end.
type Server struct {
	opt Options
	srv *sdk.Server

	mu          sync.Mutex
	ctx         context.Context        // of Run: ends the elicitation loops
	started     map[string]bool        // session keys started or resumed here
	elicited    map[string]bool        // request ids sent as elicitations
	interrupted map[string]time.Time   // when claude_interrupt stopped a session
	undelivered map[string][]string    // queued messages that never went in, with why
	sends       map[string][]*outgoing // each session's messages not yet delivered, in order
	stopping    bool                   // stop has begun: nothing more is typed
}

// New builds the server with its tools.
func New(opt Options) *Server {
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	if opt.SessionIDWait == 0 {
		opt.SessionIDWait = 30 * time.Second
	}
	if opt.ClaudeHome == "" {
		opt.ClaudeHome = session.ClaudeConfigDir(opt.Config)
	}
	if opt.CodexHome == "" {
		opt.CodexHome = session.CodexHome(opt.Config)
	}
	s := &Server{opt: opt, started: map[string]bool{}, elicited: map[string]bool{}, interrupted: map[string]time.Time{}, undelivered: map[string][]string{},
		sends: map[string][]*outgoing{}}
	if opt.Version == "" {
		opt.Version = "dev"
	}
	s.opt.Version = opt.Version
	s.srv = sdk.NewServer(&sdk.Implementation{Name: "ccbridge", Version: opt.Version}, &sdk.ServerOptions{
		// Prompts are pushed as elicitations when they arise, outside any
		// request: 2026-07-28 forbids that (elicitation only as input
		// requests of a tool call), so the handshake-era versions are spoken.
		SupportedProtocolVersions: pushVersions(),
		// The client's capabilities are known once it is initialized.
		InitializedHandler: func(_ context.Context, req *sdk.InitializedRequest) { s.initialized(req.Session) },
		Instructions: "Drive interactive Claude Code sessions running in ccbridge's tmux server: start them, send messages, " +
			"read their status and output, and answer their permission prompts, questions and plans.",
	})
	s.srv.AddReceivingMiddleware(plainChoices)
	s.addTools()
	return s
}

// promptTimeout is how long a message waits for an open dialog to close:
// the configured prompt_timeout, as for a Discord message.
func (s *Server) promptTimeout() time.Duration {
	if s.opt.Config != nil && s.opt.Config.Claude.PromptTimeout.Duration > 0 {
		return s.opt.Config.Claude.PromptTimeout.Duration
	}
	return config.DefaultPromptTimeout
}

// Run serves one client over the transport until it disconnects or ctx
// ends; prompts of the sessions it started go to it as elicitations when
// it supports them. Every request read before the input ends is answered.
// When ctx ends (SIGINT or SIGTERM) it stops taking calls at once and,
// as when the client goes, leaves the messages it still holds for the
// next `ccbridge mcp` (spool.go) before it returns.
func (s *Server) Run(ctx context.Context, t sdk.Transport) error {
	// The deliveries outlive ctx until stop has taken what they hold.
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	s.mu.Lock()
	s.ctx = wctx
	s.mu.Unlock()
	s.deliverSpooled()
	ss, err := s.srv.Connect(wctx, draining{t}, nil)
	if err != nil {
		s.stop()
		return fmt.Errorf("mcp connect: %w", err)
	}
	waited := make(chan error, 1)
	go func() { waited <- ss.Wait() }()
	select {
	case err = <-waited:
	case <-ctx.Done():
		s.opt.Log.Info("stopping on a signal")
		// Closing may wait on the input; the process ends without it.
		go func() { _ = ss.Close() }()
		err = nil
	}
	s.stop()
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

func newKey() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return KeyPrefix + hex.EncodeToString(b)
}

func (s *Server) markStarted(key string) {
	s.mu.Lock()
	s.started[key] = true
	delete(s.interrupted, key)
	s.mu.Unlock()
}

// initialized starts sending prompts to a client that takes elicitations.
func (s *Server) initialized(ss *sdk.ServerSession) {
	s.mu.Lock()
	ctx := s.ctx
	s.mu.Unlock()
	if ctx == nil {
		return
	}
	go s.elicitLoop(ctx, ss)
}

// pushVersions are the protocol versions in which a server may send an
// elicitation of its own accord: those of the initialize handshake.
func pushVersions() []string {
	var out []string
	for _, v := range sdk.SupportedProtocolVersions() {
		if v < "2026-07-28" {
			out = append(out, v)
		}
	}
	return out
}
