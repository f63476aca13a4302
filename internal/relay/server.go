package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
)

// Server timing.
const (
	// readTimeout bounds reading a request once connected: the biggest,
	// with ten files, takes milliseconds on a local socket.
	readTimeout = 30 * time.Second
	// writeTimeout bounds writing an answer to a hook that stopped reading.
	writeTimeout = 10 * time.Second
	// maxCall bounds a call whatever deadline its hook names.
	maxCall = 15 * time.Minute
	// closeGrace is how long Close lets calls under way finish before it
	// cancels them (their hooks queue what was cut short).
	closeGrace = 5 * time.Second
)

// Posters finds the poster of a server's bot.
type Posters func(server string) (chat.Poster, bool)

// Server answers the hooks' calls on the daemon's socket, each with the
// poster of the server it names.
type Server struct {
	ln      *net.UnixListener
	posters Posters
	log     *slog.Logger
	// peer is the uid at the other end of a connection (SO_PEERCRED).
	peer   func(*net.UnixConn) (int, error)
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Listen serves the socket at path (in the daemon's private runtime
// directory) until Close. A socket left by a daemon that crashed is
// replaced; anything else at path is an error. The socket is the owner's
// alone (0600), and a connection from another uid is closed unanswered.
func Listen(path string, posters Posters, log *slog.Logger) (*Server, error) {
	return listen(path, posters, log, peerUID)
}

func listen(path string, posters Posters, log *slog.Logger, peer func(*net.UnixConn) (int, error)) (*Server, error) {
	if err := removeStale(path); err != nil {
		return nil, err
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("relay socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("relay socket: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{ln: ln, posters: posters, log: log, peer: peer, ctx: ctx, cancel: cancel}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// removeStale removes the socket of a daemon that did not remove its own.
// The caller holds the daemon lock, so no live daemon listens there.
func removeStale(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("relay socket: %w", err)
	case fi.Mode().Type() != os.ModeSocket:
		return fmt.Errorf("relay socket: %s exists and is not a socket; remove it", path)
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("relay socket: remove a stale one: %w", err)
	}
	return nil
}

// Close stops taking calls and returns once those under way are done:
// they get closeGrace, then are cancelled.
func (s *Server) Close() error {
	err := s.ln.Close()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(closeGrace):
		s.cancel()
		<-done
	}
	s.cancel()
	return err
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		conn, err := s.ln.AcceptUnix()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			s.log.Warn("relay: accept", "err", err)
			time.Sleep(10 * time.Millisecond) // out of descriptors, say: not a hot loop
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serve(conn)
		}()
	}
}

// serve answers one call.
func (s *Server) serve(conn *net.UnixConn) {
	defer conn.Close()
	if uid, err := s.peer(conn); err != nil || uid != os.Getuid() {
		s.log.Warn("relay: refused a connection from another user", "uid", uid, "err", err)
		return
	}
	_ = conn.SetReadDeadline(time.Now().Add(readTimeout))
	var req request
	if err := json.NewDecoder(io.LimitReader(conn, maxRequest)).Decode(&req); err != nil {
		s.log.Warn("relay: unreadable request", "err", err)
		return
	}
	timeout := req.Timeout
	if timeout <= 0 || timeout > maxCall {
		timeout = maxCall
	}
	ctx, cancel := context.WithTimeout(s.ctx, timeout)
	defer cancel()
	var resp response
	if p, ok := s.posters(req.Server); ok {
		resp = dispatch(ctx, p, req)
	} else {
		// Kept in the outbox until that bot is configured again.
		resp.Err = &wireError{Kind: kindTransient, Text: fmt.Sprintf("no bot for server %q in the daemon's config", req.Server)}
	}
	if resp.Err != nil {
		s.log.Debug("relay: call failed", "op", req.Op, "server", req.Server, "err", resp.Err.Text)
	}
	_ = conn.SetWriteDeadline(time.Now().Add(writeTimeout))
	if err := json.NewEncoder(conn).Encode(resp); err != nil {
		s.log.Warn("relay: answer not delivered", "op", req.Op, "err", err)
	}
}

// dispatch makes the call req names with p.
func dispatch(ctx context.Context, p chat.Poster, req request) response {
	var m chat.Message
	if req.Message != nil {
		m = *req.Message
	}
	var r response
	var err error
	switch req.Op {
	case opPost:
		r.ID, err = p.Post(ctx, req.Channel, m)
	case opPostOnce:
		r.ID, err = p.PostOnce(ctx, req.Channel, req.Nonce, m)
	case opPostCard:
		r.ID, r.FileIDs, err = p.PostCard(ctx, req.Channel, m)
	case opEdit:
		err = p.Edit(ctx, req.Channel, req.MessageID, m)
	case opEditCard:
		err = p.EditCard(ctx, req.Channel, req.MessageID, m, req.Text)
	case opSendMentioning:
		r.ID, err = p.SendMentioning(ctx, req.Channel, req.Nonce, req.Text, req.Users)
	case opNotice:
		err = p.Notice(ctx, req.Channel, req.Text, req.Per)
	case opReact:
		err = p.React(ctx, req.Channel, req.MessageID, req.Text)
	case opTyping:
		err = p.Typing(ctx, req.Channel)
	case opStartThread:
		r.ID, err = p.StartThread(ctx, req.Channel, req.Text)
	case opStartPrivateThread:
		r.ID, r.Missed, err = p.StartPrivateThread(ctx, req.Channel, req.Text, req.Users)
	case opArchiveThread:
		err = p.ArchiveThread(ctx, req.Channel)
	case opEveryoneCanView:
		r.OK, err = p.EveryoneCanView(ctx, req.Channel)
	case opDownload:
		r.Data, err = p.Download(ctx, req.Text, req.Limit)
	default:
		err = fmt.Errorf("unknown relay operation %q", req.Op)
	}
	r.Err = toWire(err)
	return r
}
