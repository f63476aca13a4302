package tmux

import (
	"context"
	"errors"
	"testing"

	"github.com/ccbridge/ccbridge/internal/execx"
)

// A server whose last pane just died answers list-panes with "no current
// target" while it exits: that is no server, not a failure.
func TestListPanesOfAnExitingServer(t *testing.T) {
	s := newFake(t, execx.Call{Args: argv("list-panes", "-a", "-F", paneFormat), Err: execx.Exit(1, "no current target\n")})
	if _, err := s.ListPanes(context.Background()); !errors.Is(err, ErrNoServer) {
		t.Fatalf("ListPanes err = %v, want ErrNoServer", err)
	}
}
