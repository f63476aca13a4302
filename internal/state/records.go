package state

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// Session is one Claude Code session that ccbridge runs in a tmux pane, keyed
// by the CCBRIDGE_SESSION value the daemon gives the pane.
type Session struct {
	Server    string `json:"server"`
	Project   string `json:"project"`
	ChannelID string `json:"channel_id"`
	ThreadID  string `json:"thread_id,omitempty"`
	Cwd       string `json:"cwd"`
	PaneID    string `json:"pane_id,omitempty"`
	// Socket is set for a pane on the user's own tmux server (a Claude
	// taken over): ccbridge drives it but never kills it.
	Socket string `json:"socket,omitempty"`
	// ServerPID and PanePID are that server's and that pane's pids at the
	// take-over: a pane id alone names another pane after a restart.
	ServerPID int `json:"server_pid,omitempty"`
	PanePID   int `json:"pane_pid,omitempty"`

	Model          string `json:"model,omitempty"`
	PermissionMode string `json:"permission_mode,omitempty"`
	Progress       string `json:"progress,omitempty"` // off, text or tools
	// Agent is the coding agent the pane runs: "" (Claude Code) or "codex".
	Agent string `json:"agent,omitempty"`
	// PromptTimeout is how long Claude waits for the permission hook (the
	// timeout its settings give the hook): the hook waits no longer, also
	// with no daemon to say so (a session of ccbridge mcp).
	PromptTimeout time.Duration `json:"prompt_timeout,omitempty"`

	// Set from hook calls.
	ClaudeSessionID string    `json:"claude_session_id,omitempty"`
	TranscriptPath  string    `json:"transcript_path,omitempty"`
	LastEvent       string    `json:"last_event,omitempty"`
	LastEventAt     time.Time `json:"last_event_at,omitzero"`
	LastPromptID    string    `json:"last_prompt_id,omitempty"`
	// Busy is true from UserPromptSubmit until Stop, StopFailure or an
	// interrupt (which fires no hook: the daemon clears it).
	Busy bool `json:"busy,omitempty"`
	// Prompts are the last few UserPromptSubmit texts: the delivery
	// receipts of messages pasted from Discord. Several are kept because
	// messages sent in quick succession are submitted before the daemon
	// reads the record.
	Prompts  []Prompt `json:"prompts,omitempty"`
	ModeSeen string   `json:"mode_seen,omitempty"` // permission_mode of the last hook payload
	// StartSource is the source of the last SessionStart: startup, resume,
	// clear or compact.
	StartSource string `json:"start_source,omitempty"`
	// ModelSwitches counts PostModelSwitch events, the last of which asked
	// for SwitchRequested: how /model learns that Claude switched.
	ModelSwitches   int    `json:"model_switches,omitempty"`
	SwitchRequested string `json:"switch_requested,omitempty"`
}

// Prompt is one prompt Claude Code accepted.
type Prompt struct {
	At   time.Time `json:"at"`
	Text string    `json:"text"`
	// Boot is CLOCK_BOOTTIME in nanoseconds when the hook saw the prompt:
	// one clock for every process on the machine, which the wall clock's
	// steps do not move (see NotBefore).
	Boot int64 `json:"boot,omitempty"`
}

// NotBefore reports whether the prompt was accepted at or after since, a
// time.Now() taken in this process (it must carry its monotonic reading).
// The comparison is on the boot clock when the prompt has one, so a step
// of the wall clock between the paste and the hook can neither hide a
// receipt nor let an older prompt pass for a new one; it falls back to
// wall times for records written without it.
func (p Prompt) NotBefore(since time.Time) bool {
	if p.Boot > 0 {
		if now, ok := bootNanos(); ok {
			return p.Boot >= now-int64(time.Since(since))
		}
	}
	return !p.At.Before(since)
}

// MaxPrompts is how many receipts a session record keeps.
const MaxPrompts = 8

// AddPrompt records a receipt, keeping the newest MaxPrompts.
// It stamps the prompt with the boot clock if the caller did not.
func (s *Session) AddPrompt(p Prompt) {
	if p.Boot == 0 {
		p.Boot, _ = bootNanos()
	}
	s.Prompts = append(s.Prompts, p)
	if n := len(s.Prompts); n > MaxPrompts {
		s.Prompts = s.Prompts[n-MaxPrompts:]
	}
}

// Channel is where a session's messages go: its thread if it has one.
func (s Session) Channel() string {
	if s.ThreadID != "" {
		return s.ThreadID
	}
	return s.ChannelID
}

// Bot is what a hook needs of one configured bot. The daemon writes it
// (0600, in the 0700 runtime dir) so hooks never parse the config. It
// holds no token: the hooks post through the daemon (internal/relay), and
// the daemon rewrites at start the records an older one wrote with it.
type Bot struct {
	// Instance goes into the buttons the hooks post, so that only this
	// installation's daemon acts on them.
	Instance string `json:"instance"`
	// PromptTimeout is how long a hook waits for an answer from Discord.
	PromptTimeout time.Duration `json:"prompt_timeout"`
	// Limit is the most characters one message of the bot's platform
	// holds (chat.Poster.Limit); 0 for Discord's.
	Limit int `json:"limit,omitempty"`
}

// Outbound is one Discord message that could not be posted yet, keyed by
// OutboxKey so that keys sort in posting order.
type Outbound struct {
	Server    string    `json:"server"`
	ChannelID string    `json:"channel_id"`
	Content   string    `json:"content"`
	Files     []string  `json:"files,omitempty"` // paths of files to upload
	Attempts  int       `json:"attempts"`
	LastError string    `json:"last_error,omitempty"`
	Created   time.Time `json:"created"`
}

// FailOutbound moves a queued message that Discord refused for good from
// the outbox to outbox-failed/, with why, instead of dropping it: its text
// and the files it names stay on the host for a person to read. It
// returns the file that keeps it.
func (s *Store) FailOutbound(ctx context.Context, key string, o Outbound, why string) (string, error) {
	p, err := s.OutboxFailed.path(key)
	if err != nil {
		return "", err
	}
	o.LastError = why
	if _, err := s.OutboxFailed.Update(ctx, key, func(f *Outbound) error { *f = o; return nil }); err != nil {
		return "", fmt.Errorf("keep failed message: %w", err)
	}
	if err := s.Outbox.Delete(ctx, key); err != nil {
		return "", fmt.Errorf("keep failed message: %w", err)
	}
	return p, nil
}

var outboxSeq atomic.Uint64

// wallNow is the wall clock (a variable for tests of clock steps).
var wallNow = time.Now

// OutboxKey returns a key that sorts after every key made before it, in
// this process or another on the same runtime dir, even across a step of
// the wall clock: its number is the wall time in nanoseconds or, if that
// is not larger, one more than the last number issued (kept in the
// runtime dir under a lock).
func (s *Store) OutboxKey() string { return s.outboxKey(true) }

// outboxKey is OutboxKey; durable false skips the fsync of the order file,
// for keys that matter only while the machine runs (a reply's place, held
// by a live process), not across a power cut.
func (s *Store) outboxKey(durable bool) string {
	n := wallNow().UnixNano()
	if next, err := s.Dir.nextOrder(n, durable); err == nil {
		n = next
	} else {
		s.Dir.logger().Warn("outbox order file unusable; ordering by the wall clock", "err", err)
	}
	return fmt.Sprintf("%020d-%d-%06d", n, os.Getpid(), outboxSeq.Add(1)%1_000_000)
}

// orderLockWait bounds the wait for the order file's lock.
const orderLockWait = 2 * time.Second

// nextOrder returns max(now, last+1) and stores it as the last, under an
// exclusive lock on locks/outbox-order.
func (d *Dir) nextOrder(now int64, durable bool) (int64, error) {
	dir, err := d.subdir("locks")
	if err != nil {
		return 0, err
	}
	f, err := os.OpenFile(filepath.Join(dir, "outbox-order"), os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return 0, fmt.Errorf("outbox order: %w", err)
	}
	defer f.Close()
	deadline := time.Now().Add(orderLockWait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			return 0, fmt.Errorf("outbox order: lock: %w", err)
		}
		time.Sleep(lockRetry)
	}
	buf := make([]byte, 32)
	k, _ := f.ReadAt(buf, 0)
	last, _ := strconv.ParseInt(strings.TrimSpace(string(buf[:k])), 10, 64)
	if now <= last {
		now = last + 1
	}
	if err := f.Truncate(0); err != nil {
		return 0, fmt.Errorf("outbox order: %w", err)
	}
	if _, err := f.WriteAt([]byte(strconv.FormatInt(now, 10)+"\n"), 0); err != nil {
		return 0, fmt.Errorf("outbox order: %w", err)
	}
	if !durable {
		return now, nil
	}
	if err := f.Sync(); err != nil {
		return 0, fmt.Errorf("outbox order: %w", err)
	}
	return now, nil
}

// Turn is the outcome of one Claude turn, keyed by TurnKey(session id,
// prompt id). Creating it is the claim that the turn's reply is handled
// exactly once.
type Turn struct {
	SessionKey      string    `json:"session_key,omitempty"`
	ClaudeSessionID string    `json:"claude_session_id"`
	PromptID        string    `json:"prompt_id"`
	Event           string    `json:"event"` // Stop or StopFailure
	Reply           string    `json:"reply"`
	Error           string    `json:"error,omitempty"`
	At              time.Time `json:"at"`
}

// TurnKey names the record of one turn.
func TurnKey(claudeSessionID, promptID string) string {
	return fmt.Sprintf("%s.%s", claudeSessionID, promptID)
}

// Route maps a project directory to its channel, for hook calls from
// sessions started by hand (no CCBRIDGE_SESSION): they are routed by the
// longest project path that prefixes their cwd.
type Route struct {
	Path      string `json:"path"`
	Server    string `json:"server"`
	Project   string `json:"project"`
	ChannelID string `json:"channel_id"`
	Progress  string `json:"progress,omitempty"`
}

// Routes is the daemon's route table, stored under the key RoutesKey.
type Routes struct {
	Routes []Route `json:"routes"`
	// Platforms maps each server to its front end's platform ("discord",
	// "telegram"), for a hook that names where a card was decided. A
	// server missing here is Discord's, as every server was before.
	Platforms map[string]string `json:"platforms,omitempty"`
}

// RoutesKey names the single record of the Routes collection.
const RoutesKey = "projects"

// Match returns the route whose path is the longest prefix of cwd on a
// path-separator boundary (/app never matches /app2).
func (r Routes) Match(cwd string) (Route, bool) {
	var best Route
	found := false
	for _, rt := range r.Routes {
		p := strings.TrimRight(rt.Path, "/")
		if p == "" || (cwd != p && !strings.HasPrefix(cwd, p+"/")) {
			continue
		}
		if !found || len(p) > len(strings.TrimRight(best.Path, "/")) {
			best, found = rt, true
		}
	}
	return best, found
}

// Request statuses.
const (
	RequestPending     = "pending"     // waiting for an answer
	RequestDecided     = "decided"     // answered in Discord; Decision holds the answer
	RequestTerminal    = "terminal"    // answered in the terminal first
	RequestExpired     = "expired"     // prompt_timeout passed; the terminal dialog stays
	RequestInterrupted = "interrupted" // the turn was interrupted or the hook killed
	RequestFailed      = "failed"      // the card could not be posted
)

// Request is a permission prompt, question or plan approval that Claude
// Code waits on, keyed by an unguessable id carried in every button of its
// card. The hook that waits for it creates it; the daemon decides it.
type Request struct {
	Session         string          `json:"session"`
	Server          string          `json:"server"`
	ChannelID       string          `json:"channel_id"`
	Instance        string          `json:"instance"`
	ClaudeSessionID string          `json:"claude_session_id"`
	PromptID        string          `json:"prompt_id,omitempty"`
	ToolName        string          `json:"tool_name"`
	ToolInput       json.RawMessage `json:"tool_input"`
	Suggestions     json.RawMessage `json:"suggestions,omitempty"`
	AgentType       string          `json:"agent_type,omitempty"`
	PolicyRule      string          `json:"policy_rule,omitempty"` // the [policy] ask rule that forced this prompt
	MessageID       string          `json:"message_id,omitempty"`
	// CardHash is the CardHash of the card as it was last drawn (posted or
	// updated by a click), and CardFiles the ids of its attachments as
	// Discord stored them: a click approves only while the clicked
	// message is still that card (anyone holding the bot token can edit
	// a card or post a copy of its buttons).
	CardHash  string    `json:"card_hash,omitempty"`
	CardFiles []string  `json:"card_files,omitempty"`
	HookPID   int       `json:"hook_pid"`
	Created   time.Time `json:"created"`
	Deadline  time.Time `json:"deadline"`

	Status   string          `json:"status"`
	Decision json.RawMessage `json:"decision,omitempty"` // the PermissionRequest decision to print
	Outcome  string          `json:"outcome,omitempty"`  // what the card says happened
	// Via is the front end that decided ("mcp"), when not the card itself:
	// the waiting hook then updates the card.
	Via string `json:"via,omitempty"`
	// Step is the card's current view (e.g. choosing an "always" scope).
	Step string `json:"step,omitempty"`
	// Answers are AskUserQuestion answers so far, by question text.
	Answers map[string]string `json:"answers,omitempty"`
	// Keys names the agent ("codex") whose own dialog takes the answer as
	// keys the daemon presses: its hook cannot wait without hiding that
	// dialog, so no hook waits on the request. Always asks for the
	// dialog's "don't ask again"; Pressed says the daemon took the
	// decision to the pane (pressed once, whatever came of it).
	Keys    string `json:"keys,omitempty"`
	Always  bool   `json:"always,omitempty"`
	Pressed bool   `json:"pressed,omitempty"`
}

// NewRequestID returns an unguessable request id (96 random bits).
func NewRequestID() (string, error) {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("request id: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// Store is the set of collections in a runtime directory.
type Store struct {
	Dir      *Dir
	Sessions *Collection[Session]
	Turns    *Collection[Turn]
	Bots     *Collection[Bot]
	Outbox   *Collection[Outbound]
	// OutboxFailed keeps what Discord refused for good (FailOutbound).
	OutboxFailed *Collection[Outbound]
	Routes       *Collection[Routes]
	Requests     *Collection[Request]
	Seen         *Collection[Seen]
	Live         *Collection[Live] // hand-started Claudes, by Claude session id (live.go)
}

// Seen marks something posted once, such as a progress text block.
type Seen struct {
	At time.Time `json:"at"`
}

// Record format versions; bump one when its record changes incompatibly.
const (
	sessionVersion = 1
	turnVersion    = 1
	botVersion     = 1
	outboxVersion  = 1
	routesVersion  = 1
	requestVersion = 1
	seenVersion    = 1
)

// OpenStore opens (creating it if needed) the runtime directory at root and
// its collections.
func OpenStore(root string) (*Store, error) {
	d, err := Open(root)
	if err != nil {
		return nil, err
	}
	s := &Store{Dir: d}
	if s.Sessions, err = newCollection[Session](d, "sessions", sessionVersion); err != nil {
		return nil, err
	}
	if s.Turns, err = newCollection[Turn](d, "turns", turnVersion); err != nil {
		return nil, err
	}
	if s.Bots, err = newCollection[Bot](d, "bots", botVersion); err != nil {
		return nil, err
	}
	if s.Outbox, err = newCollection[Outbound](d, "outbox", outboxVersion); err != nil {
		return nil, err
	}
	if s.OutboxFailed, err = newCollection[Outbound](d, "outbox-failed", outboxVersion); err != nil {
		return nil, err
	}
	if s.Routes, err = newCollection[Routes](d, "routes", routesVersion); err != nil {
		return nil, err
	}
	if s.Requests, err = newCollection[Request](d, "requests", requestVersion); err != nil {
		return nil, err
	}
	if s.Seen, err = newCollection[Seen](d, "seen", seenVersion); err != nil {
		return nil, err
	}
	if s.Live, err = newCollection[Live](d, "live", liveVersion); err != nil {
		return nil, err
	}
	return s, nil
}

// EnvSession names the environment variable that carries a pane's session
// key from the daemon to the hooks Claude Code runs in that pane.
const EnvSession = "CCBRIDGE_SESSION"
