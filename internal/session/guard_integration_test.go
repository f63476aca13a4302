//go:build integration

package session

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/testutil/tmuxtest"
	"github.com/ccbridge/ccbridge/internal/tmux"
)

// Every dialog's hint line, as real tmux searches the screen for it: a key
// guarded by inputGuard is refused while any of them is shown, and sent
// when none is, words of a dialog in a reply included (fidelity-3 B1).
func TestInputGuardRefusesEveryDialogMarker(t *testing.T) {
	srv := tmuxtest.New(t)
	ctx := context.Background()
	// Keeps the tmux session (and server) up while marker panes come and go.
	if _, err := srv.NewPane(ctx, tmux.PaneSpec{Session: "markers", Window: "keep", Dir: t.TempDir(), Argv: []string{"sleep", "600"}}); err != nil {
		t.Fatal(err)
	}
	prose := []string{"", "Quick safety check: the tests pass and nothing else changed.", "The change is ready. Do you want to proceed?",
		"Would you like to proceed?", "Ready to code?", "Make auto mode your default permission mode?", "Press Esc to cancel the run."}
	for _, marker := range append(prose, dialogChrome...) {
		allowed := slices.Contains(prose, marker)
		pane, err := srv.NewPane(ctx, tmux.PaneSpec{Session: "markers", Window: "m", Dir: t.TempDir(),
			Env:  map[string]string{"MARKER": marker},
			Argv: []string{"sh", "-c", `printf 'screen ready\n  %s\n' "$MARKER"; exec cat >/dev/null`}, Width: 100, Height: 20})
		if err != nil {
			t.Fatal(err)
		}
		tmuxtest.WaitScreen(t, srv, pane, "screen ready", 5*time.Second)
		err = srv.SendKeysIf(ctx, pane, inputGuard, tmux.KeyEnter)
		switch {
		case allowed && err != nil:
			t.Errorf("no dialog on screen (%q), yet the key was refused: %v", marker, err)
		case !allowed && !errors.Is(err, tmux.ErrRefused):
			t.Errorf("marker %q on screen: err = %v, want ErrRefused", marker, err)
		}
		if screen, _ := srv.Capture(ctx, pane, 0); marker != "" && !strings.Contains(screen, marker) {
			t.Errorf("the pane does not show %q:\n%s", marker, screen)
		}
		srv.KillPane(ctx, pane)
	}
}
