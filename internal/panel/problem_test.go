package panel

import (
	"context"
	"strings"
	"testing"
)

// Something that stops every session from starting (a Claude command not
// found) is on the panel from the daemon's start.
func TestPanelShowsAStartProblem(t *testing.T) {
	p, _ := newPanel(t, 1)
	if m := p.Render(context.Background(), "home"); strings.Contains(m.Content, "⚠️") {
		t.Fatalf("a problem shown with none set:\n%s", m.Content)
	}
	p.Problem = `Claude cannot be started: "claude" not found (PATH=/usr/bin:/bin)`
	if m := p.Render(context.Background(), "home"); !strings.Contains(m.Content, "⚠️ Claude cannot be started: \"claude\" not found (PATH=/usr/bin:/bin)") {
		t.Fatalf("panel:\n%s", m.Content)
	}
}
