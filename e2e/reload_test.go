//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
	"github.com/ccbridge/ccbridge/internal/testutil/fakemodel"
)

// TestConfigEditTakesEffectLive (first-contact-2 §1): a config edited
// while the daemon runs is checked and applied with no restart. A project
// added works at once and a changed [claude].env reaches the next session
// started, while the session already running keeps its environment. A
// broken edit changes nothing and says why.
func TestConfigEditTakesEffectLive(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	// The Bash tool shows the environment Claude runs with.
	b.model.Script("SCN_MARK", fakemodel.Tool("", "Bash", map[string]any{"command": "echo \"mark[$E2E_RELOAD_MARK]\"", "description": "Show the mark"}))
	b.say(p, "hello before the edit")
	b.waitReply(p, "ok: hello before the edit")

	// A trusted folder's subfolder is trusted: no trust dialog for it.
	web := &project{bot: p.bot, name: "web", dir: filepath.Join(p.dir, "web"), key: p.bot.Name + "-web"}
	if err := os.MkdirAll(web.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	web.channel = b.srv.AddChannel(p.bot.GuildID, "web")
	orig, err := os.ReadFile(b.cfg)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(orig), "env = { ", `env = { E2E_RELOAD_MARK = "two", `, 1) +
		fmt.Sprintf("  [[servers.projects]]\n  name = \"web\"\n  channel_id = %q\n  path = %q\n  footer = \"off\"\n", web.channel, web.dir)
	if !strings.Contains(edited, "E2E_RELOAD_MARK") {
		t.Fatalf("the config has no [claude].env to edit:\n%s", orig)
	}
	// Written in place, as a simple editor does (truncate, then write).
	if err := os.WriteFile(b.cfg, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	notice := b.waitReply(p, "config reloaded")
	for _, want := range []string{"project " + p.bot.Name + "/web added", "[claude] env (added E2E_RELOAD_MARK)"} {
		if !strings.Contains(notice.Content, want) {
			t.Errorf("reload notice lacks %q:\n%s", want, notice.Content)
		}
	}
	if strings.Contains(notice.Content, "two") {
		t.Errorf("reload notice shows an env value:\n%s", notice.Content)
	}

	// The new project works, and its session (the first started since the
	// edit) has the new environment.
	b.say(web, "SCN_MARK in the new project")
	allowCard(b, web)
	b.waitReply(web, "Done. Last tool result: mark[two]")
	// The session that ran before the edit still has the old one.
	b.say(p, "SCN_MARK in the running session")
	allowCard(b, p)
	b.waitReply(p, "Done. Last tool result: mark[]")

	// A broken edit: nothing changes (the web project still routes) and
	// the reason is said, in the channel and in the log.
	broken := strings.Replace(edited, `permission_mode = "default"`, `permission_mode = "yolo"`, 1)
	broken = broken[:strings.Index(broken, "  [[servers.projects]]\n  name = \"web\"")]
	if err := os.WriteFile(b.cfg, []byte(broken), 0o600); err != nil {
		t.Fatal(err)
	}
	refused := b.waitReply(p, "was not applied")
	if !strings.Contains(refused.Content, `claude.permission_mode: "yolo" is not allowed`) {
		t.Errorf("the broken edit's notice does not say why:\n%s", refused.Content)
	}
	waitOutput(t, b.out, "the edited config has problems; the running config is kept", 10*time.Second)
	b.say(web, "still here after the broken edit")
	b.waitReply(web, "ok: still here after the broken edit")
	if n := strings.Count(b.out.String(), "config reloaded"); n != 1 {
		t.Errorf("%d reloads logged, want 1:\n%s", n, b.out.String())
	}
}

// allowCard clicks Allow on the next permission card in the project's
// channel.
func allowCard(b *bridge, p *project) {
	b.t.Helper()
	card := b.waitCard(p, "the Bash card in "+p.name, func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "mark[") })
	b.srv.Click(card.ID, action(b.t, card, "allow"), b.owner)
}
