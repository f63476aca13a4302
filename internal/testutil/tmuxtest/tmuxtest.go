// Package tmuxtest starts a private tmux server for a test: its own socket
// file under a temporary directory (never the user's default server), killed
// when the test ends.
package tmuxtest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/execx"
	"github.com/ccbridge/ccbridge/internal/testutil/testenv"
	"github.com/ccbridge/ccbridge/internal/tmux"
)

// New returns a handle on a private tmux server; the server itself starts
// with the first pane.
func New(t testing.TB) *tmux.Server {
	t.Helper()
	testenv.NeedTool(t, "tmux")
	// Socket paths are limited to ~100 bytes, and t.TempDir can be long.
	dir, err := os.MkdirTemp("", "ccbt")
	if err != nil {
		t.Fatal(err)
	}
	s := tmux.New(execx.Exec{}, tmux.Options{SocketPath: filepath.Join(dir, "sock")})
	t.Cleanup(func() {
		_ = s.KillServer(context.Background())
		os.RemoveAll(dir)
	})
	return s
}

// WaitScreen polls the pane until its screen contains want, and returns the
// screen; it fails the test after timeout with the last screen.
func WaitScreen(t testing.TB, s *tmux.Server, pane, want string, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var screen string
	for time.Now().Before(deadline) {
		var err error
		screen, err = s.Capture(context.Background(), pane, 0)
		if err == nil && strings.Contains(screen, want) {
			return screen
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("pane %s never showed %q; last screen:\n%s", pane, want, screen)
	return ""
}
