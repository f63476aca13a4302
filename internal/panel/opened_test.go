package panel

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/config"
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

// On Telegram an opened folder is a topic of its owner's private chat,
// while the panel is in the group, whose members read every topic: it
// says a folder is open there, and its state, never its path.
func TestPanelKeepsTelegramOpenedFoldersPrivate(t *testing.T) {
	cfg, err := config.Parse("[[servers]]\nname = \"phone\"\nplatform = \"telegram\"\ntoken_env = \"X\"\nchat_id = \"-1001234567890\"\nowner_ids = [\"123456789\"]\n" +
		"[[servers.projects]]\nname = \"api\"\ntopic_id = \"42\"\npath = \"/src/api\"\n")
	if err != nil {
		t.Fatal(err)
	}
	p, reg := newPanel(t, 0)
	p.Config = cfg
	ctx := context.Background()
	if _, err := reg.Opened.Create(ctx, "123456789.3", state.Opened{Server: "phone", ChannelID: "-1001234567890", ThreadID: "123456789.3", Path: "/src/secret-plans", Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	p.Sessions.(fakeSessions)[session.ThreadKey("phone", session.OpenedProject, "123456789.3")] = "idle"
	m := p.Render(ctx, "phone")
	if strings.Contains(m.Content, "secret-plans") || strings.Contains(m.Content, "123456789.3") {
		t.Errorf("the group's panel shows a private folder:\n%s", m.Content)
	}
	if !strings.Contains(m.Content, "**Opened folders** (/open)\n🟢 running: a folder open in a private chat") {
		t.Errorf("the panel does not say a folder is open:\n%s", m.Content)
	}
}
