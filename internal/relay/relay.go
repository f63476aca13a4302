// Package relay carries the hooks' posts to the daemon over a unix socket
// in the private runtime directory: the daemon holds each bot's warm
// connection, rate limiter and token, and the hooks link no chat library
// whatever the front ends. Client implements chat.Poster by asking the
// daemon; Server, which the daemon runs, answers with the chat.Poster of
// the server named. One request and its answer per connection, as JSON:
// a hook makes a handful of calls, one after another, and a connection on
// a local socket costs tens of microseconds.
package relay

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"path/filepath"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
)

// SocketName is the daemon's socket in the runtime directory.
const SocketName = "relay.sock"

// SocketPath is the daemon's socket in the runtime directory root.
func SocketPath(root string) string { return filepath.Join(root, SocketName) }

// maxRequest bounds what one request may carry: ten files of a message,
// 10 MiB in all on Discord, grow by a third in base64.
const maxRequest = 64 << 20

// The operations, one per chat.Poster method (Limit is the client's own).
const (
	opPost               = "post"
	opPostOnce           = "post_once"
	opPostCard           = "post_card"
	opEdit               = "edit"
	opEditCard           = "edit_card"
	opSendMentioning     = "send_mentioning"
	opNotice             = "notice"
	opReact              = "react"
	opTyping             = "typing"
	opStartThread        = "start_thread"
	opStartPrivateThread = "start_private_thread"
	opArchiveThread      = "archive_thread"
	opEveryoneCanView    = "everyone_can_view"
	opDownload           = "download"
)

// request is one call. Timeout is what is left of the caller's deadline:
// the daemon gives the call no more.
type request struct {
	Op        string        `json:"op"`
	Server    string        `json:"server"`
	Timeout   time.Duration `json:"timeout"`
	Channel   string        `json:"channel,omitempty"`
	MessageID string        `json:"message_id,omitempty"`
	Nonce     string        `json:"nonce,omitempty"`
	Message   *chat.Message `json:"message,omitempty"`
	Text      string        `json:"text,omitempty"` // outcome, content, notice text, emoji, thread name, URL
	Users     []string      `json:"users,omitempty"`
	Per       time.Duration `json:"per,omitempty"`
	Limit     int64         `json:"limit,omitempty"`
}

// response is a call's answer: its results, or the error it came to.
type response struct {
	ID      string     `json:"id,omitempty"`
	FileIDs []string   `json:"file_ids,omitempty"`
	Missed  []string   `json:"missed,omitempty"`
	OK      bool       `json:"ok,omitempty"`
	Data    []byte     `json:"data,omitempty"`
	Err     *wireError `json:"err,omitempty"`
}

// What an error means crosses the wire as a kind (the chat sentinel it
// matched), its text as is, and the platform's wait.
const (
	kindTransient  = "transient"
	kindAuth       = "auth"
	kindPermission = "permission"
	kindUnknown    = "unknown_message"
	kindOther      = "other"
)

type wireError struct {
	Kind       string        `json:"kind"`
	Text       string        `json:"text"`
	RetryAfter time.Duration `json:"retry_after,omitempty"`
}

func toWire(err error) *wireError {
	if err == nil {
		return nil
	}
	kind := kindOther
	switch {
	case errors.Is(err, chat.ErrAuth):
		kind = kindAuth
	case errors.Is(err, chat.ErrMissingPermission):
		kind = kindPermission
	case errors.Is(err, chat.ErrUnknownMessage):
		kind = kindUnknown
	case errors.Is(err, chat.ErrTransient):
		kind = kindTransient
	}
	return &wireError{Kind: kind, Text: err.Error(), RetryAfter: chat.RetryAfter(err)}
}

// Error is a failure the daemon's poster answered: it matches the chat
// sentinel of its kind and says how long the platform asked to wait.
type Error struct {
	Kind string
	Text string
	Wait time.Duration
}

func (e *Error) Error() string             { return e.Text }
func (e *Error) RetryAfter() time.Duration { return e.Wait }
func (e *Error) Is(target error) bool {
	switch target {
	case chat.ErrTransient:
		return e.Kind == kindTransient
	case chat.ErrAuth:
		return e.Kind == kindAuth
	case chat.ErrMissingPermission:
		return e.Kind == kindPermission
	case chat.ErrUnknownMessage:
		return e.Kind == kindUnknown
	}
	return false
}

func fromWire(w *wireError) error {
	if w == nil {
		return nil
	}
	return &Error{Kind: w.Kind, Text: w.Text, Wait: w.RetryAfter}
}

// nonceLen is the longest nonce every platform takes (Discord: 25).
const nonceLen = 25

// Nonce derives a post's nonce (PostOnce) from a stable key, such as an
// outbox entry's: the hook that tries first and the daemon that retries
// from the outbox pass the same one, so a create the hook's call made but
// did not hear back from is not posted twice.
func Nonce(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])[:nonceLen]
}

// Upload timing: one post may take a base for the round trip plus its
// files at a floor bandwidth (1 Mbit/s), as the daemon's poster allows
// an upload, so a 10 MiB reply is not cut short on a slow uplink.
const (
	uploadBase     = 5 * time.Second
	floorBandwidth = 1_000_000 / 8 // bytes per second
)

// UploadTimeout is how long a post with size bytes of files may take.
func UploadTimeout(size int64) time.Duration {
	return uploadBase + time.Duration(size)*time.Second/floorBandwidth
}
