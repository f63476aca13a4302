//go:build e2e

package e2e

import (
	"testing"

	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/testutil/claudetest"
)

// A Claude started by hand in a new window of ccbridge's own tmux session
// (tmux -L ccbridge attach, then C-b c) is mirrored like any hand-started
// Claude: the window no longer inherits the session key of the pane that
// created the tmux session, which made the global hooks step aside
// (first contact 2, finding 4).
func TestHandStartedClaudeInTheBridgesTmuxSessionIsMirrored(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	b.say(p, "warm up")
	b.waitReply(p, "ok: warm up")
	panes := b.panes()
	if len(panes) != 1 {
		t.Fatalf("panes %+v", panes)
	}
	home := installHooks(t, b)
	c := claudetest.Start(t, claudetest.Options{Tmux: b.tmux, Session: panes[0].Session, Dir: p.dir, ModelURL: b.model.URL,
		Env: map[string]string{"HOME": home, state.EnvRuntimeDir: b.runtime}})
	d := &desk{tmux: b.tmux, claude: c}
	d.typeAtDesk(t, "typed in a window of the bridge's session")
	b.waitReply(p, "Typed at the terminal")
	b.waitReply(p, "ok: typed in a window of the bridge's session")
}
