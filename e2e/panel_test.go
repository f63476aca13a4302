//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/panel"
	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
	"github.com/ccbridge/ccbridge/internal/testutil/fakemodel"
)

// 6. The panel shows the states; Stop stops a project, Start starts it; a
// non-owner's click does nothing. A prompt still waiting when the daemon
// restarts can be answered afterwards.
func TestControlPanel(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	general := b.srv.AddChannel(p.bot.GuildID, "general")
	b.reconfigure(func(cfg string) string {
		return strings.Replace(cfg, "owner_ids = [", "general_channel_id = \""+general+"\"\nowner_ids = [", 1)
	})
	panelMsg := func(what string, pred func(*fakediscord.Message) bool) *fakediscord.Message {
		t.Helper()
		return b.srv.WaitMessage(long, what, func(m *fakediscord.Message) bool { return m.ChannelID == general && m.Author.Bot && pred(m) })
	}
	pm := panelMsg("the panel", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "⚪ stopped **p0**") })
	button := func(m *fakediscord.Message, suffix string) string {
		for _, id := range m.CustomIDs() {
			if strings.HasSuffix(id, suffix) {
				return id
			}
		}
		t.Fatalf("panel has no %s button: %q", suffix, m.CustomIDs())
		return ""
	}
	stranger := b.srv.NewUser("stranger")
	it := b.srv.Click(pm.ID, button(pm, "|start|p0"), stranger)
	if r := b.srv.WaitResponse(it, 5*time.Second); !strings.Contains(string(r.Response), "Only the owners") {
		t.Fatalf("stranger's click: %s", r.Response)
	}
	time.Sleep(time.Second)
	if n := len(b.panes()); n != 0 {
		t.Fatal("a stranger's click started a session")
	}

	b.srv.Click(pm.ID, button(pm, "|start|p0"), b.owner)
	panelMsg("the panel after Start", func(m *fakediscord.Message) bool {
		return m.ID == pm.ID && strings.Contains(m.Content, "🟢 running **p0**")
	})
	if n := len(b.panes()); n != 1 {
		t.Fatalf("%d panes after Start", n)
	}

	// A pending prompt survives a daemon restart and shows on the panel.
	b.model.Script("SCN_PANEL", fakemodel.Tool("", "Bash", map[string]any{"command": "touch panel.txt && echo panel-ok", "description": "Touch"}))
	b.say(p, "SCN_PANEL")
	card := b.waitCard(p, "the card", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "touch panel.txt") })
	panelMsg("the panel with a waiting prompt", func(m *fakediscord.Message) bool {
		return m.ID == pm.ID && strings.Contains(m.Content, "1 prompt(s) waiting")
	})
	b.kill()
	b.start()
	b.srv.Click(card.ID, action(t, card, "allow"), b.owner)
	b.waitReply(p, "Done. Last tool result: panel-ok")

	cur, _ := b.srv.Message(pm.ID)
	b.srv.Click(pm.ID, button(cur, "|stop|p0"), b.owner)
	panelMsg("the panel after Stop", func(m *fakediscord.Message) bool {
		return m.ID == pm.ID && strings.Contains(m.Content, "⚪ stopped **p0**")
	})
	deadline := time.Now().Add(long)
	for len(b.panes()) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("Stop left the pane running")
		}
		time.Sleep(100 * time.Millisecond)
	}
	panels := 0
	for _, m := range b.botMessages(general) {
		if _, _, _, ok := panel.ParseHeader(m.Content); ok {
			panels++
		} else if _, _, _, ok := panel.ParseChannelList(m.Content); !ok {
			t.Errorf("the panel channel holds %q", m.Content)
		}
	}
	if panels != 1 {
		t.Errorf("%d panel messages; it should be edited in place", panels)
	}
}

// startup = true starts a project's session with the daemon; a restart
// leaves the running window alone.
func TestStartupStartsTheProject(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	b.reconfigure(func(cfg string) string {
		line := "  path = \"" + p.dir + "\"\n"
		return strings.Replace(cfg, line, line+"  startup = true\n", 1)
	})
	deadline := time.Now().Add(long)
	for len(b.panes()) != 1 {
		if time.Now().After(deadline) {
			t.Fatal("startup = true started no session")
		}
		time.Sleep(100 * time.Millisecond)
	}
	before := b.panes()[0].ID
	b.kill()
	b.start()
	time.Sleep(2 * time.Second)
	if panes := b.panes(); len(panes) != 1 || panes[0].ID != before {
		t.Fatalf("panes after restart = %+v, want the same one", panes)
	}
	b.say(p, "already running")
	b.waitReply(p, "ok: already running")
}

// A project's channel deleted in Discord: its session stops (the pane
// goes) and the owners are told in the panel's channel what to change.
func TestDeletedProjectChannelIsReportedInThePanel(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 2, "")
	p := b.projects[1]
	general := b.srv.AddChannel(p.bot.GuildID, "general")
	b.reconfigure(func(cfg string) string {
		return strings.Replace(cfg, "owner_ids = [", "general_channel_id = \""+general+"\"\nowner_ids = [", 1)
	})
	b.say(p, "hello before the delete")
	b.waitReply(p, "ok: hello before the delete")
	if n := len(b.panes()); n != 1 {
		t.Fatalf("%d panes, want the project's", n)
	}
	b.srv.DeleteChannel(p.channel)
	b.srv.WaitMessage(long, "the notice in the panel's channel", func(m *fakediscord.Message) bool {
		return m.ChannelID == general && m.Author.Bot && strings.Contains(m.Content, "The channel of project **p1** was deleted") && strings.Contains(m.Content, "`channel_id`")
	})
	for deadline := time.Now().Add(long); len(b.panes()) != 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the deleted channel's session still runs: %d panes", len(b.panes()))
		}
	}
}
