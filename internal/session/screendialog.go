package session

import (
	"fmt"
	"strings"

	"github.com/ccbridge/ccbridge/internal/config"
)

// ScreenDialog is the dialog a screen of the session's pane shows, as its
// agent draws it, highlight included; "" when none is open. A /screen key
// is pressed only while the dialog it was drawn over is the one open. A
// session whose agent is unknown reads as no screen at all (an error): no
// key is pressed into it.
func (m *Manager) ScreenDialog(key, screen string) (string, error) {
	a, err := m.agentOf(key)
	if err != nil {
		return "", err
	}
	if a.Name() == config.AgentClaude {
		return DialogText(screen), nil // screen.go, which predates the seam
	}
	if !a.DialogOpen(screen) {
		return "", nil
	}
	if d, ok := parseDialog(screen, a); ok {
		return fmt.Sprintf("%s\x00%s\x00%d", d.Text, strings.Join(d.Choices, "\x00"), d.Selected), nil
	}
	// A dialog whose choices do not read: the whole screen stands for
	// it, so that any change counts as another dialog.
	return screen, nil
}
