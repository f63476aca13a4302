package mcp

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxDrain bounds how long the end of the input waits for the answers of
// the requests read before it.
const maxDrain = 2 * time.Minute

// draining makes a transport answer every request read before its input
// ends: the SDK closes the connection at the end of input and drops the
// answers not yet written, so `printf '<initialize>\n<tools/list>\n' |
// ccbridge mcp` would print nothing.
type draining struct{ sdk.Transport }

func (t draining) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &drainConn{Connection: c, open: map[jsonrpc.ID]bool{}, answered: make(chan struct{}, 1), closed: make(chan struct{})}, nil
}

type drainConn struct {
	sdk.Connection
	mu        sync.Mutex
	open      map[jsonrpc.ID]bool // requests read and not yet answered
	answered  chan struct{}       // signalled after each answer
	closed    chan struct{}
	closeOnce sync.Once
}

func (c *drainConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if err != nil {
		c.drain(ctx)
		return nil, err
	}
	if r, ok := m.(*jsonrpc.Request); ok && r.ID.IsValid() {
		c.mu.Lock()
		c.open[r.ID] = true
		c.mu.Unlock()
	}
	return m, nil
}

func (c *drainConn) Write(ctx context.Context, m jsonrpc.Message) error {
	err := c.Connection.Write(ctx, m)
	if r, ok := m.(*jsonrpc.Response); ok {
		c.mu.Lock()
		delete(c.open, r.ID)
		c.mu.Unlock()
		select {
		case c.answered <- struct{}{}:
		default:
		}
	}
	return err
}

func (c *drainConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Connection.Close()
}

// drain waits until every request read so far is answered, the
// connection is closed or the wait is too long.
func (c *drainConn) drain(ctx context.Context) {
	limit := time.NewTimer(maxDrain)
	defer limit.Stop()
	for {
		c.mu.Lock()
		n := len(c.open)
		c.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-c.answered:
		case <-c.closed:
			return
		case <-ctx.Done():
			return
		case <-limit.C:
			return
		}
	}
}
