package panel

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/session"
	"github.com/ccbridge/ccbridge/internal/state"
)

func TestPanelShowsOpenedFolders(t *testing.T) {
	p, reg := newPanel(t, 1)
	ctx := context.Background()
	now := time.Now()
	for id, o := range map[string]state.Opened{
		"701": {Server: "home", ChannelID: "100000000000000100", ThreadID: "701", Path: "/src/tool", Created: now},
		"702": {Server: "home", ThreadID: "702", Path: "/src/closed", Created: now, Closed: true},
		"703": {Server: "work", ThreadID: "703", Path: "/src/theirs", Created: now},
	} {
		if _, err := reg.Opened.Create(ctx, id, o); err != nil {
			t.Fatal(err)
		}
	}
	p.Sessions.(fakeSessions)[session.ThreadKey("home", session.OpenedProject, "701")] = "idle"
	m := p.Render(ctx, "home")
	if !strings.Contains(m.Content, "**Opened folders** (/open)\n🟢 running <#701> `/src/tool`") {
		t.Errorf("panel lacks the opened folder:\n%s", m.Content)
	}
	if strings.Contains(m.Content, "/src/closed") || strings.Contains(m.Content, "/src/theirs") {
		t.Errorf("panel shows a closed folder or another server's:\n%s", m.Content)
	}
}
