// Package audit keeps ccbridge's record of decisions: every permission
// prompt, question and plan answered (from a chat front end, the terminal
// or MCP),
// every call the [policy] refused or sent for confirmation, and every
// /commit, /merge and /discard. It is an append-only JSON-lines file in the
// durable state directory, rotated by size. The hooks and the daemon both
// write it, so it imports no other internal package: the redactor that
// masks secrets in entries is handed in (SetRedactor).
package audit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

// Where a decision came from. A chat front end's is its platform's name as
// a server's config gives it (platform = "discord" or "telegram").
const (
	FromDiscord  = "discord"
	FromTelegram = "telegram"
	FromTerminal = "terminal"
	FromMCP      = "mcp"
	FromPolicy   = "policy"
	FromTimeout  = "timeout"
)

// titles name the chat front ends as people read them.
var titles = map[string]string{FromDiscord: "Discord", FromTelegram: "Telegram"}

// Chat reports whether from is a chat front end's, whose Who is a user id
// of its platform.
func Chat(from string) bool {
	_, ok := titles[from]
	return ok
}

// Title names where a decision came from as a sentence does: "Discord",
// "Telegram"; any other value as it is.
func Title(from string) string {
	if t, ok := titles[from]; ok {
		return t
	}
	return from
}

// Entry is one decision.
type Entry struct {
	At      time.Time `json:"at"`
	Kind    string    `json:"kind"` // permission, policy, commit, merge, discard, …
	Server  string    `json:"server,omitempty"`
	Project string    `json:"project,omitempty"`
	Session string    `json:"session,omitempty"`
	Channel string    `json:"channel,omitempty"`
	Tool    string    `json:"tool,omitempty"`
	Asked   string    `json:"asked"`          // what was asked, in short
	Answer  string    `json:"answer"`         // allow, deny, ask, …
	Rule    string    `json:"rule,omitempty"` // the policy rule that decided
	Who     string    `json:"who,omitempty"`  // a chat user id, or the local user
	From    string    `json:"from"`           // discord, telegram, terminal, mcp, policy, timeout
	Detail  string    `json:"detail,omitempty"`
}

// File is the log's name in its directory; rotated files get .1, .2, ….
const File = "audit.jsonl"

// Rotation limits.
var (
	MaxBytes int64 = 4 << 20
	Keep           = 5
)

// maxAsked bounds what an entry keeps of the question.
const maxAsked = 2000

// LockWait bounds Append's wait for the log's lock: a writer that holds it
// longer (stopped, or on a hung file system) costs an entry, not the
// caller's time.
const LockWait = 5 * time.Second

// lockPoll is how often a waiting writer tries the lock again.
const lockPoll = 10 * time.Millisecond

var redactor atomic.Pointer[func(string) string]

// SetRedactor makes every entry's free text (what was asked, the detail,
// the rule) pass mask before it is written: commands and prompts may
// hold secrets, and the log must not keep them. The hooks and the daemon
// set it to internal/redact's String, which this leaf cannot import.
func SetRedactor(mask func(string) string) { redactor.Store(&mask) }

// Append adds an entry to the log in dir (created 0700), waiting at most
// LockWait for the lock.
func Append(dir string, e Entry) error {
	ctx, cancel := context.WithTimeout(context.Background(), LockWait)
	defer cancel()
	return AppendContext(ctx, dir, e)
}

// AppendContext adds an entry to the log in dir (created 0700), rotating
// first when the file is full. Writers in several processes take turns on
// a lock file, so lines never interleave and rotation happens once; the
// wait for it ends with ctx.
func AppendContext(ctx context.Context, dir string, e Entry) error {
	if e.At.IsZero() {
		e.At = time.Now().UTC()
	}
	if mask := redactor.Load(); mask != nil && *mask != nil {
		// Before the cut below, which could leave half a secret that no
		// rule recognizes.
		e.Asked, e.Detail, e.Rule = (*mask)(e.Asked), (*mask)(e.Detail), (*mask)(e.Rule)
	}
	if r := []rune(e.Asked); len(r) > maxAsked {
		e.Asked = string(r[:maxAsked-1]) + "…"
	}
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	unlock, err := lock(ctx, dir)
	if err != nil {
		return err
	}
	defer unlock()
	p := filepath.Join(dir, File)
	if st, err := os.Stat(p); err == nil && st.Size()+int64(len(line)) > MaxBytes {
		rotate(p)
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	_, err = f.Write(append(line, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}

func rotate(p string) {
	_ = os.Remove(p + "." + strconv.Itoa(Keep))
	for i := Keep - 1; i >= 1; i-- {
		_ = os.Rename(p+"."+strconv.Itoa(i), p+"."+strconv.Itoa(i+1))
	}
	_ = os.Rename(p, p+".1")
}

// lock takes the log's lock, trying without blocking until ctx ends: a
// blocking flock cannot be given a deadline.
func lock(ctx context.Context, dir string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, File+".lock"), os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("audit: lock: %w", err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("audit: lock held by another writer: %w", ctx.Err())
		case <-time.After(lockPoll):
		}
	}
}

// Last returns the newest n entries, oldest first, reading the rotated
// file too when the current one holds fewer. Lines that do not decode are
// skipped.
func Last(dir string, n int) ([]Entry, error) {
	var out []Entry
	p := filepath.Join(dir, File)
	for _, name := range []string{p, p + ".1"} {
		b, err := os.ReadFile(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("audit: %w", err)
		}
		var es []Entry
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			var e Entry
			if json.Unmarshal(sc.Bytes(), &e) == nil {
				es = append(es, e)
			}
		}
		out = append(es, out...)
		if len(out) >= n {
			break
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out, nil
}
