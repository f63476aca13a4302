package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/state"
)

// A server that stops (SIGINT, SIGTERM, or its client gone) hands the
// messages it still holds to a spool in the runtime dir: one file per
// session and stop, which the next `ccbridge mcp` delivers, in order,
// before it takes a call. Claude Code stops an MCP server with SIGINT,
// then SIGTERM, then SIGKILL about half a second later, and never closes
// its stdin first: what stays in memory is lost.

// spoolDir is where stopped servers leave their undelivered messages.
func (s *Server) spoolDir() string { return filepath.Join(s.opt.Store.Dir.Root(), "mcp-queue") }

// spooled is one session's messages left by a stopped server.
type spooled struct {
	Key      string       `json:"key"`
	Messages []spooledMsg `json:"messages"`
	At       time.Time    `json:"at"`
}

// spooledMsg is one message left by a stopped server. Unsure says it was
// being typed when the server stopped: it is typed again only if Claude
// has not received it since Given.
type spooledMsg struct {
	Text   string    `json:"text"`
	Given  time.Time `json:"given"`
	Unsure bool      `json:"unsure,omitempty"`
}

// typingWait bounds the wait for a message being typed when the server
// stops; one still being typed then is spooled as unsure.
const typingWait = 50 * time.Millisecond

// stop stops the server's deliveries and writes what it still holds to
// the spool. It returns within typingWait and a few file writes.
func (s *Server) stop() {
	deadline := time.Now().Add(typingWait)
	held := map[string][]spooledMsg{}
	for {
		s.mu.Lock()
		s.stopping = true
		typing := false
		for _, list := range s.sends {
			for _, m := range list {
				typing = typing || m.typing
			}
		}
		if typing && time.Now().Before(deadline) {
			s.mu.Unlock()
			time.Sleep(5 * time.Millisecond)
			continue
		}
		// A message still being typed (its pane's lock held elsewhere, say)
		// is spooled as unsure: whether it went in is checked next time.
		for key, list := range s.sends {
			for _, m := range list {
				if m.finished || m.typed {
					continue
				}
				m.spooled = true
				held[key] = append(held[key], spooledMsg{Text: m.text, Given: m.given, Unsure: m.typing})
			}
		}
		s.mu.Unlock()
		break
	}
	for key, texts := range held {
		if err := s.writeSpool(key, texts); err != nil {
			s.opt.Log.Error("queued messages lost at stop", "session", key, "count", len(texts), "err", err)
			continue
		}
		s.opt.Log.Info("queued messages left for the next ccbridge mcp", "session", key, "count", len(texts))
	}
}

func (s *Server) writeSpool(key string, texts []spooledMsg) error {
	if err := os.MkdirAll(s.spoolDir(), 0o700); err != nil {
		return err
	}
	b, err := json.Marshal(spooled{Key: key, Messages: texts, At: time.Now().UTC()})
	if err != nil {
		return err
	}
	// Names sort in the order of the stops that wrote them.
	name := fmt.Sprintf("%020d-%d-%s.json", time.Now().UnixNano(), os.Getpid(), safeID(key))
	return state.WriteAtomic(filepath.Join(s.spoolDir(), name), b, 0o600)
}

// takeSpool claims every spooled file (a rename, so that two servers
// starting at once never both deliver one) and returns their messages,
// oldest stop first.
func (s *Server) takeSpool() []spooled {
	entries, err := os.ReadDir(s.spoolDir())
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	var out []spooled
	for _, n := range names {
		path := filepath.Join(s.spoolDir(), n)
		claimed := fmt.Sprintf("%s.taken-%d", path, os.Getpid())
		if err := os.Rename(path, claimed); err != nil {
			continue // another server took it
		}
		b, err := os.ReadFile(claimed)
		var sp spooled
		if err == nil {
			err = json.Unmarshal(b, &sp)
		}
		if err == nil && sp.Key == "" {
			err = errors.New("no session key")
		}
		if err != nil {
			s.opt.Log.Error("unreadable spooled messages", "file", claimed, "err", err)
			continue // kept, for a person to read
		}
		_ = os.Remove(claimed)
		out = append(out, sp)
	}
	return out
}

// deliverSpooled queues the messages a stopped server left, ahead of any
// call of this one; one that cannot be delivered is reported in the
// session's next claude_status or claude_say, as any queued message. A
// message given longer ago than catch_up is not typed but reported so:
// the person may have quit precisely because they no longer wanted it,
// and catch-up holds Discord messages to the same age.
func (s *Server) deliverSpooled() {
	maxAge := config.DefaultCatchUp
	if s.opt.Config != nil && s.opt.Config.Discord.CatchUp.Duration > 0 {
		maxAge = s.opt.Config.Discord.CatchUp.Duration
	}
	now := time.Now()
	for _, sp := range s.takeSpool() {
		for _, msg := range sp.Messages {
			given := msg.Given
			if given.IsZero() {
				given = sp.At
			}
			if age := now.Sub(given); age > maxAge {
				s.mu.Lock()
				s.undelivered[sp.Key] = append(s.undelivered[sp.Key], fmt.Sprintf("%q: given %s ago; not typed (a message left by a stopped ccbridge mcp is typed only within [discord] catch_up, %s)",
					shorten(msg.Text, 100), ago(age), maxAge))
				s.mu.Unlock()
				s.opt.Log.Warn("a spooled message is too old to type", "session", sp.Key, "given", given)
				continue
			}
			m := &outgoing{text: msg.Text, held: make(chan struct{}), done: make(chan error, 1), queued: true, given: msg.Given}
			if msg.Unsure {
				m.check = msg.Given
			}
			close(m.held)
			s.mu.Lock()
			first := len(s.sends[sp.Key]) == 0
			s.sends[sp.Key] = append(s.sends[sp.Key], m)
			s.mu.Unlock()
			if first {
				go s.sendLoop(sp.Key)
			}
		}
		s.opt.Log.Info("delivering messages a stopped ccbridge mcp left", "session", sp.Key, "count", len(sp.Messages))
	}
}

// ago says how long ago, as a person reads it: "30 days", "5 hours",
// "20 minutes".
func ago(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%d days", int(d/(24*time.Hour)))
	case d >= 2*time.Hour:
		return fmt.Sprintf("%d hours", int(d/time.Hour))
	}
	return fmt.Sprintf("%d minutes", int(d/time.Minute))
}
