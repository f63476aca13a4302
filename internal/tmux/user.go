package tmux

import (
	"errors"
	"path/filepath"
	"strings"

	"github.com/ccbridge/ccbridge/internal/execx"
)

// ErrNotSocket says a socket path is not one ccbridge will talk to.
var ErrNotSocket = errors.New("not an absolute tmux socket path")

// UserServer returns a handle on another tmux server, such as the user's
// own (the socket path is the first field of a pane's $TMUX). ccbridge
// only sends keys to, pastes into, captures and lists panes of such a
// server: it never creates or kills anything there.
func UserServer(run execx.Runner, socket string) (*Server, error) {
	if socket == "" || !filepath.IsAbs(socket) || strings.ContainsAny(socket, "\n\x00") {
		return nil, ErrNotSocket
	}
	return New(run, Options{SocketPath: filepath.Clean(socket)}), nil
}
