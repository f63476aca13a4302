package fakediscord

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"
)

// This file holds the test-side API for what real Discord does that a bot
// must survive: system messages, thread renames, deletes and auto-archive,
// requests that are processed and then fail, and slow uploads.

// PostSystem emits a system message (type 4 channel name change, 6 pin,
// 7 member join, 18 thread created, 21 thread starter, ...) authored by
// user through MESSAGE_CREATE, as Discord does.
func (s *Server) PostSystem(channelID string, user User, typ int, content string) *Message {
	s.t.Helper()
	return do(s, func() (*Message, error) {
		c, err := s.channel(channelID)
		if err != nil {
			return nil, err
		}
		m := &Message{ID: s.id(), Type: typ, ChannelID: channelID, GuildID: c.GuildID, Author: user, Content: content}
		s.addMessage(m)
		return m.clone(), nil
	})
}

// threadCreated posts the THREAD_CREATED (18) message Discord puts in the
// parent channel of a new public thread; caller holds s.mu.
func (s *Server) threadCreated(th *Channel, user User) {
	if th.Type == 12 {
		return // private threads are not announced in the parent
	}
	s.addMessage(&Message{ID: s.id(), Type: 18, ChannelID: th.ParentID, GuildID: th.GuildID, Author: user, Content: th.Name,
		Reference: map[string]any{"channel_id": th.ID, "guild_id": th.GuildID}})
}

// threadStarter posts the THREAD_STARTER_MESSAGE (21) Discord puts first in
// a thread started from a message; caller holds s.mu.
func (s *Server) threadStarter(th *Channel, user User) {
	s.addMessage(&Message{ID: s.id(), Type: 21, ChannelID: th.ID, GuildID: th.GuildID, Author: user,
		Reference: map[string]any{"channel_id": th.ParentID, "guild_id": th.GuildID, "message_id": th.ID}})
}

// StartThreadFrom makes user start a public thread from a message, as the
// Discord client does: the thread gets the message's id, THREAD_CREATE is
// dispatched, THREAD_CREATED (18) is posted in the parent channel and
// THREAD_STARTER_MESSAGE (21) inside the thread. It returns the thread id.
func (s *Server) StartThreadFrom(msgID, name string, user User) string {
	s.t.Helper()
	return do(s, func() (string, error) {
		m, ok := s.messages[msgID]
		if !ok || m.Deleted {
			return "", fmt.Errorf("no message %s to start a thread from", msgID)
		}
		if _, exists := s.channels[msgID]; exists {
			return "", fmt.Errorf("message %s already has a thread", msgID)
		}
		th := &Channel{ID: msgID, GuildID: m.GuildID, ParentID: m.ChannelID, Type: 11, Name: name}
		s.createThread(th, user, true)
		return th.ID, nil
	})
}

// createThread stores a thread and emits what Discord emits; caller holds s.mu.
func (s *Server) createThread(th *Channel, user User, fromMessage bool) {
	s.channels[th.ID] = th
	j := th.json()
	j["newly_created"] = true
	s.dispatchGuild(th.GuildID, "THREAD_CREATE", j)
	s.threadCreated(th, user)
	if fromMessage {
		s.threadStarter(th, user)
	}
	s.notify()
}

// RenameThread makes user rename a thread: THREAD_UPDATE, then the
// CHANNEL_NAME_CHANGE (4) system message in the thread, content = new name.
func (s *Server) RenameThread(threadID, name string, user User) {
	s.t.Helper()
	do(s, func() (struct{}, error) {
		c, err := s.channel(threadID)
		if err != nil {
			return struct{}{}, err
		}
		c.Name = name
		s.dispatchGuild(c.GuildID, "THREAD_UPDATE", c.json())
		s.addMessage(&Message{ID: s.id(), Type: 4, ChannelID: c.ID, GuildID: c.GuildID, Author: user, Content: name})
		return struct{}{}, nil
	})
}

// DeleteThread deletes a thread: THREAD_DELETE (id, guild_id, parent_id,
// type, as Discord sends it); REST calls on it then answer 404 10003.
func (s *Server) DeleteThread(threadID string) {
	s.t.Helper()
	do(s, func() (struct{}, error) {
		c, err := s.channel(threadID)
		if err != nil {
			return struct{}{}, err
		}
		if !c.isThread() {
			return struct{}{}, fmt.Errorf("channel %s is not a thread", threadID)
		}
		delete(s.channels, threadID)
		s.dispatchGuild(c.GuildID, "THREAD_DELETE", map[string]any{"id": c.ID, "guild_id": c.GuildID, "parent_id": c.ParentID, "type": c.Type})
		s.notify()
		return struct{}{}, nil
	})
}

// AutoArchive archives a thread for inactivity, as Discord's timer does
// after auto_archive_duration: THREAD_UPDATE with archived=true; the lock
// is left as it was.
func (s *Server) AutoArchive(threadID string) {
	s.t.Helper()
	do(s, func() (struct{}, error) {
		c, err := s.channel(threadID)
		if err != nil {
			return struct{}{}, err
		}
		if !c.isThread() {
			return struct{}{}, fmt.Errorf("channel %s is not a thread", threadID)
		}
		c.Archived = true
		s.dispatchGuild(c.GuildID, "THREAD_UPDATE", c.json())
		s.notify()
		return struct{}{}, nil
	})
}

// FailAfterCreate makes the next n calls matching method and glob be
// processed (the message is created, the edit applied) and THEN answered
// with HTTP status, as when Discord commits a request and its answer is
// lost behind a 5xx.
func (s *Server) FailAfterCreate(method, glob string, status, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &fault{method: method, glob: glob, status: status, left: n, after: true})
}

// SlowUploads makes the fake read multipart request bodies (uploads) at
// bytesPerSecond, as over a slow uplink; 0 turns it off.
func (s *Server) SlowUploads(bytesPerSecond int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.uploadRate = bytesPerSecond
}

// throttleUpload wraps a multipart body in a rate-limited reader.
func (s *Server) throttleUpload(r *http.Request) {
	s.mu.Lock()
	rate := s.uploadRate
	s.mu.Unlock()
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if rate <= 0 || !strings.HasPrefix(mt, "multipart/") {
		return
	}
	r.Body = &slowReader{r: r.Body, ctx: r.Context(), rate: rate, start: time.Now()}
}

// slowReader delivers a body only once it would have arrived at rate, and
// fails if the client goes away first. It takes the bytes off the socket
// at once, so that net/http starts watching the connection (a loopback
// client has long since written everything into the socket buffers, while
// a slow uplink would still be sending).
type slowReader struct {
	r     io.ReadCloser
	ctx   context.Context
	rate  int
	start time.Time
	buf   *bytes.Reader
}

func (sr *slowReader) Read(p []byte) (int, error) {
	if sr.buf == nil {
		data, err := io.ReadAll(sr.r)
		if err != nil {
			return 0, err
		}
		due := sr.start.Add(time.Duration(float64(len(data)) / float64(sr.rate) * float64(time.Second)))
		t := time.NewTimer(time.Until(due))
		defer t.Stop()
		select {
		case <-t.C:
		case <-sr.ctx.Done():
			return 0, sr.ctx.Err()
		}
		sr.buf = bytes.NewReader(data)
	}
	return sr.buf.Read(p)
}

func (sr *slowReader) Close() error { return sr.r.Close() }

// discardWriter swallows the real answer of a FailAfterCreate call.
type discardWriter struct{ h http.Header }

func (d discardWriter) Header() http.Header         { return d.h }
func (d discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d discardWriter) WriteHeader(int)             {}

// NonceTTL is how long Discord remembers a nonce for enforce_nonce; Discord
// documents only "the past few minutes".
const NonceTTL = 5 * time.Minute

// nonce returns the request's nonce (an integer or a string) as a string.
func (o *outgoing) nonce() string {
	if len(o.Nonce) == 0 || string(o.Nonce) == "null" {
		return ""
	}
	var str string
	if json.Unmarshal(o.Nonce, &str) == nil {
		return str
	}
	return string(o.Nonce)
}

// sameNonce finds a message the author created with nonce within NonceTTL;
// caller holds s.mu.
func (s *Server) sameNonce(authorID, nonce string) *Message {
	if nonce == "" {
		return nil
	}
	for _, m := range s.messages {
		if m.Nonce == nonce && m.Author.ID == authorID && time.Since(m.created) < NonceTTL {
			return m
		}
	}
	return nil
}
