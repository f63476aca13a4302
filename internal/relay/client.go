package relay

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
)

// callTimeout bounds a call made without a deadline of its own.
const callTimeout = time.Minute

// Client is a chat.Poster that hands every call to the daemon, which
// makes it as the server's bot. When the daemon is not there (no socket,
// refused, no answer in time) a call fails with an error matching
// chat.ErrTransient: the caller queues the post in the outbox, which the
// daemon drains once it runs.
type Client struct {
	path   string
	server string
	limit  int
}

// NewClient returns the poster of server's bot, through the daemon's
// socket at path; limit is the platform's message length (0: Discord's).
func NewClient(path, server string, limit int) *Client {
	if limit <= 0 {
		limit = chat.Limit
	}
	return &Client{path: path, server: server, limit: limit}
}

var _ chat.Poster = (*Client)(nil)

// Limit is the most characters one message of the server's platform holds.
func (c *Client) Limit() int { return c.limit }

// unavailable is a call the daemon did not take or answer: worth trying
// again once it runs.
func (c *Client) unavailable(err error) error {
	return fmt.Errorf("%w: the ccbridge daemon did not answer at %s: %w", chat.ErrTransient, c.path, err)
}

// call makes one request on its own connection and returns the answer.
func (c *Client) call(ctx context.Context, req request) (response, error) {
	if err := checkSocket(c.path); err != nil {
		return response{}, c.unavailable(err)
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(callTimeout)
	}
	req.Server, req.Timeout = c.server, time.Until(deadline)
	if req.Timeout <= 0 {
		return response{}, c.unavailable(context.DeadlineExceeded)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", c.path)
	if err != nil {
		return response{}, c.unavailable(err)
	}
	defer conn.Close()
	// The call ends with ctx, also while the daemon is still working on it.
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })
	defer stop()
	_ = conn.SetDeadline(deadline)
	if err := json.NewEncoder(conn).Encode(req); err != nil {
		return response{}, c.unavailable(err)
	}
	var resp response
	if err := json.NewDecoder(io.LimitReader(conn, maxRequest)).Decode(&resp); err != nil {
		return response{}, c.unavailable(err)
	}
	return resp, fromWire(resp.Err)
}

// checkSocket refuses to hand a post to anything but a socket of this
// user's that only this user may open: the runtime directory is private,
// and this holds even if it were not.
func checkSocket(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if fi.Mode().Type() != os.ModeSocket {
		return fmt.Errorf("%s is not a socket", path)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s may be opened by other users (mode %v)", path, fi.Mode().Perm())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%s is owned by uid %d, not by you", path, st.Uid)
	}
	return nil
}

func (c *Client) Post(ctx context.Context, channelID string, m chat.Message) (string, error) {
	resp, err := c.call(ctx, request{Op: opPost, Channel: channelID, Message: &m})
	return resp.ID, err
}

func (c *Client) PostOnce(ctx context.Context, channelID, nonce string, m chat.Message) (string, error) {
	resp, err := c.call(ctx, request{Op: opPostOnce, Channel: channelID, Nonce: nonce, Message: &m})
	return resp.ID, err
}

func (c *Client) PostCard(ctx context.Context, channelID string, m chat.Message) (string, []string, error) {
	resp, err := c.call(ctx, request{Op: opPostCard, Channel: channelID, Message: &m})
	return resp.ID, resp.FileIDs, err
}

func (c *Client) Edit(ctx context.Context, channelID, messageID string, m chat.Message) error {
	_, err := c.call(ctx, request{Op: opEdit, Channel: channelID, MessageID: messageID, Message: &m})
	return err
}

func (c *Client) EditCard(ctx context.Context, channelID, messageID string, m chat.Message, outcome string) error {
	_, err := c.call(ctx, request{Op: opEditCard, Channel: channelID, MessageID: messageID, Message: &m, Text: outcome})
	return err
}

func (c *Client) SendMentioning(ctx context.Context, channelID, nonce, content string, users []string) (string, error) {
	resp, err := c.call(ctx, request{Op: opSendMentioning, Channel: channelID, Nonce: nonce, Text: content, Users: users})
	return resp.ID, err
}

func (c *Client) Notice(ctx context.Context, channelID, text string, per time.Duration) error {
	_, err := c.call(ctx, request{Op: opNotice, Channel: channelID, Text: text, Per: per})
	return err
}

func (c *Client) React(ctx context.Context, channelID, messageID, emoji string) error {
	_, err := c.call(ctx, request{Op: opReact, Channel: channelID, MessageID: messageID, Text: emoji})
	return err
}

func (c *Client) Typing(ctx context.Context, channelID string) error {
	_, err := c.call(ctx, request{Op: opTyping, Channel: channelID})
	return err
}

func (c *Client) StartThread(ctx context.Context, channelID, name string) (string, error) {
	resp, err := c.call(ctx, request{Op: opStartThread, Channel: channelID, Text: name})
	return resp.ID, err
}

func (c *Client) StartPrivateThread(ctx context.Context, channelID, name string, members []string) (string, []string, error) {
	resp, err := c.call(ctx, request{Op: opStartPrivateThread, Channel: channelID, Text: name, Users: members})
	return resp.ID, resp.Missed, err
}

func (c *Client) ArchiveThread(ctx context.Context, threadID string) error {
	_, err := c.call(ctx, request{Op: opArchiveThread, Channel: threadID})
	return err
}

func (c *Client) EveryoneCanView(ctx context.Context, channelID string) (bool, error) {
	resp, err := c.call(ctx, request{Op: opEveryoneCanView, Channel: channelID})
	return resp.OK, err
}

func (c *Client) Download(ctx context.Context, url string, limit int64) ([]byte, error) {
	resp, err := c.call(ctx, request{Op: opDownload, Text: url, Limit: limit})
	return resp.Data, err
}
