package panel

import (
	"context"
	"strings"
	"testing"
)

// A server whose bot cannot connect says so on its panel, drawn by REST,
// until the bot is back.
func TestPanelShowsWhyItsBotIsNotConnected(t *testing.T) {
	p, _ := newPanel(t, 1)
	p.SetConnectProblem("home", "Discord refused the connection: the Message Content intent is off (retrying in 10m0s)")
	p.SetConnectProblem("elsewhere", "not this server's")
	m := p.Render(context.Background(), "home")
	if !strings.Contains(m.Content, "⚠️ Discord refused the connection: the Message Content intent is off (retrying in 10m0s)") || strings.Contains(m.Content, "not this server's") {
		t.Fatalf("panel:\n%s", m.Content)
	}
	p.SetConnectProblem("home", "")
	if m := p.Render(context.Background(), "home"); strings.Contains(m.Content, "⚠️") {
		t.Fatalf("the problem outlived the connection:\n%s", m.Content)
	}
}
