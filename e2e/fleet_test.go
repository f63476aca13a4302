//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/execx"
	"github.com/ccbridge/ccbridge/internal/panel"
	"github.com/ccbridge/ccbridge/internal/router"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/testutil/claudetest"
	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
	"github.com/ccbridge/ccbridge/internal/testutil/fakemodel"
	"github.com/ccbridge/ccbridge/internal/tmux"
)

// fleetUnreachable is the tests' [general] unreachable_after: short, so that
// a stopped machine shows as unreachable within seconds.
const fleetUnreachable = "10s"

// newMachine starts one daemon of a fleet: its own machine name, config,
// tmux server, runtime and state dirs, one project in its own channel, on
// the shared fake Discord with the shared bot token and panel channel.
func newMachine(t *testing.T, srv *fakediscord.Server, model *fakemodel.Server, owner fakediscord.User, machine, channel, general string) *bridge {
	t.Helper()
	claude := claudetest.Binary(t)
	bot := srv.Main()
	b := &bridge{t: t, srv: srv, model: model, owner: owner}
	b.socket = fmt.Sprintf("ccbe2e-%d-%d", os.Getpid(), socketSeq.Add(1))
	b.tmux = tmux.New(execx.Exec{}, tmux.Options{Socket: b.socket})
	base := settledTempDir(t)
	// Registered after base, so run before its removal: Claude is gone first.
	// (t.Context() is cancelled by the time cleanups run.)
	t.Cleanup(func() { _ = b.tmux.KillServer(context.Background()) })
	b.runtime, b.stateDir = filepath.Join(base, "rt"), filepath.Join(base, "state")
	p := &project{bot: bot, name: "p-" + machine, channel: channel, dir: filepath.Join(base, "proj")}
	p.key = "home-" + p.name
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b.projects = []*project{p}
	home := claudeHomeIn(t, base, p.dir)
	var env []string
	for k, v := range claudetest.Env(home, model.URL) {
		env = append(env, fmt.Sprintf("%s = %q", k, v))
	}
	b.env = []string{"CCBRIDGE_E2E_FLEET_TOKEN=" + bot.Token}
	cfg := fmt.Sprintf(`[general]
machine = %q
unreachable_after = %q
[discord]
api_base = %q
[tmux]
socket = %q
[claude]
command = %q
permission_mode = "default"
env = { %s }
[[servers]]
name = "home"
token_env = "CCBRIDGE_E2E_FLEET_TOKEN"
guild_id = %q
owner_ids = [%q]
general_channel_id = %q
  [[servers.projects]]
  name = %q
  channel_id = %q
  path = %q
`, machine, fleetUnreachable, srv.URL, b.socket, claude, strings.Join(env, ", "), bot.GuildID, owner.ID, general, p.name, p.channel, p.dir)
	b.cfg = filepath.Join(base, "config.toml")
	if err := os.WriteFile(b.cfg, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	var err error
	if b.store, err = state.OpenStore(b.runtime); err != nil {
		t.Fatal(err)
	}
	b.start()
	return b
}

// callbacks counts the answers a daemon tried to give an interaction
// (a second one is refused by Discord with 40060).
func callbacks(srv *fakediscord.Server, it *fakediscord.Interaction) int {
	n := 0
	for _, c := range srv.Calls() {
		if strings.HasSuffix(c.Path, "/"+it.Token+"/callback") {
			n++
		}
	}
	return n
}

// answeredOnce waits for an interaction's answer, then gives a second
// daemon time to try answering too, and fails if one did.
func answeredOnce(t *testing.T, srv *fakediscord.Server, it *fakediscord.Interaction, what string) *fakediscord.Interaction {
	t.Helper()
	r := srv.WaitResponse(it, 5*time.Second)
	time.Sleep(time.Second) // the other daemon saw the same event; it must stay silent
	if n := callbacks(srv, it); n != 1 {
		t.Fatalf("%s: %d daemons answered, want exactly one", what, n)
	}
	return r
}

// Two daemons with different machine names share one bot on one Discord:
// each answers its own channel's messages, commands and cards and nothing
// else; a command in a channel neither maps gets exactly one answer; the
// panel channel holds one panel per machine, each showing the other; a
// stopped machine shows as unreachable and the other takes over.
func TestFleetOfTwoMachinesSharesOneBot(t *testing.T) {
	srv := fakediscord.New(t)
	model := fakemodel.New(t)
	owner := srv.NewUser("owner")
	bot := srv.Main()
	general := srv.AddChannel(bot.GuildID, "general")
	chBeta := srv.AddChannel(bot.GuildID, "beta-project")
	alpha := newMachine(t, srv, model, owner, "alpha", bot.ChannelID, general)
	beta := newMachine(t, srv, model, owner, "beta", chBeta, general)
	pa, pb := alpha.projects[0], beta.projects[0]
	if n, want := len(srv.Commands(bot.GuildID)), len(router.Commands()); n != want {
		t.Errorf("%d slash commands registered by two daemons, want %d", n, want)
	}

	// One panel message per machine, each showing the other one up.
	// panelSince waits for a machine's panel drawn at or after since
	// showing want.
	panelSince := func(machine, want string, since time.Time) *fakediscord.Message {
		t.Helper()
		return srv.WaitMessage(long, fmt.Sprintf("%s's panel showing %q", machine, want), func(m *fakediscord.Message) bool {
			name, _, at, ok := panel.ParseHeader(m.Content)
			return m.ChannelID == general && m.Author.Bot && !m.Deleted && ok && name == machine && at.Unix() >= since.Unix() && strings.Contains(m.Content, want)
		})
	}
	panelOf := func(machine, want string) *fakediscord.Message {
		t.Helper()
		return panelSince(machine, want, time.Time{})
	}
	pmA := panelOf("alpha", "🟢 **beta** up")
	pmB := panelOf("beta", "🟢 **alpha** up")
	if pmA.ID == pmB.ID || !strings.Contains(pmA.Content, "**p-alpha**") || !strings.Contains(pmB.Content, "**p-beta**") || strings.Contains(pmA.Content, "**p-beta**") {
		t.Fatalf("panels:\n%s\n---\n%s", pmA.Content, pmB.Content)
	}

	// Commands: each in its own channel, one answer, naming its machine.
	for _, c := range []struct {
		p       *project
		machine string
	}{{pa, "alpha"}, {pb, "beta"}} {
		it := srv.Command(c.p.channel, "status", owner, nil)
		r := answeredOnce(t, srv, it, "/status in "+c.p.name)
		srv.WaitMessage(5*time.Second, "/status of "+c.p.name, func(m *fakediscord.Message) bool {
			return m.ID == r.OriginalID && strings.Contains(m.Content, "**"+c.p.name+"**") && strings.Contains(m.Content, "Machine: "+c.machine)
		})
	}
	// A command in a channel neither machine maps: exactly one answer.
	it := srv.Command(general, "status", owner, nil)
	if r := answeredOnce(t, srv, it, "/status in the panel channel"); !strings.Contains(string(r.Response), "not a ccbridge project channel") {
		t.Fatalf("unmapped channel answer: %s", r.Response)
	}

	// Messages and cards: alpha's channel reaches alpha's Claude only.
	model.Script("SCN_FLEET", fakemodel.Tool("", "Bash", map[string]any{"command": "touch fleet.txt && echo fleet-ok", "description": "Touch"}))
	alpha.say(pa, "SCN_FLEET")
	card := alpha.waitCard(pa, "alpha's card", func(m *fakediscord.Message) bool { return strings.Contains(m.Content, "touch fleet.txt") })
	if n := len(beta.panes()); n != 0 {
		t.Fatalf("beta started %d sessions for a message in alpha's channel", n)
	}
	click := srv.Click(card.ID, action(t, card, "allow"), owner)
	answeredOnce(t, srv, click, "a click on alpha's card")
	alpha.waitReply(pa, "Done. Last tool result: fleet-ok")
	if _, err := os.Stat(filepath.Join(pa.dir, "fleet.txt")); err != nil {
		t.Fatalf("alpha's tool did not run: %v", err)
	}
	if n := len(beta.panes()); n != 0 {
		t.Fatalf("beta has %d sessions", n)
	}

	// Talk in the panel channel pushes the panels out of its latest 100
	// messages; each machine still follows the other's.
	for i := range 110 {
		srv.Post(general, owner, fmt.Sprintf("chatter %d", i))
	}

	// alpha dies: beta shows it unreachable once it has not checked in
	// for unreachable_after, and answers for the unmapped channels now.
	alpha.kill()
	panelOf("beta", "🔴 **alpha** unreachable")
	it = srv.Command(general, "status", owner, nil)
	if r := answeredOnce(t, srv, it, "/status in the panel channel with alpha down"); !strings.Contains(string(r.Response), "not a ccbridge project channel") {
		t.Fatalf("unmapped channel answer with alpha down: %s", r.Response)
	}
	// A command in alpha's channel: beta says whose it is.
	it = srv.Command(pa.channel, "status", owner, nil)
	if r := answeredOnce(t, srv, it, "/status in alpha's channel with alpha down"); !strings.Contains(string(r.Response), "belongs to the machine alpha") {
		t.Fatalf("answer in a down machine's channel: %s", r.Response)
	}
	if cur, _ := srv.Message(pmA.ID); cur == nil || !strings.Contains(cur.Content, "**p-alpha**") {
		t.Errorf("alpha's panel message was changed by beta: %v", cur)
	}

	// alpha comes back (its own panel message again); then beta stops
	// cleanly and says so in its panel: alpha shows it stopped at once.
	restarted := time.Now()
	alpha.start()
	if pm := panelSince("alpha", "🟢 **beta** up", restarted); pm.ID != pmA.ID {
		t.Errorf("alpha posted a second panel message %s (first %s)", pm.ID, pmA.ID)
	}
	panelOf("beta", "🟢 **alpha** up")
	_ = beta.cmd.Process.Signal(syscall.SIGTERM)
	_ = beta.cmd.Wait()
	panelOf("beta", "⚫ stopped")
	panelOf("alpha", "⚫ **beta** stopped") // not "unreachable": it said so
}

// Security review 2, finding 13: two machines that map one channel would
// both type its messages into a Claude of their own, and both reply; each
// says so in its panel, naming the other machine and the channel.
func TestFleetReportsAChannelTwoMachinesMap(t *testing.T) {
	srv := fakediscord.New(t)
	model := fakemodel.New(t)
	owner := srv.NewUser("owner")
	bot := srv.Main()
	general := srv.AddChannel(bot.GuildID, "general")
	machines := map[string]*bridge{
		"alpha": newMachine(t, srv, model, owner, "alpha", bot.ChannelID, general),
		"beta":  newMachine(t, srv, model, owner, "beta", bot.ChannelID, general),
	}
	for _, c := range [][2]string{{"alpha", "beta"}, {"beta", "alpha"}} {
		want := "⚠️ **" + c[1] + "** maps <#" + bot.ChannelID + "> too"
		srv.WaitMessage(long, c[0]+"'s panel naming the overlap", func(m *fakediscord.Message) bool {
			name, _, _, ok := panel.ParseHeader(m.Content)
			return m.ChannelID == general && !m.Deleted && ok && name == c[0] && strings.Contains(m.Content, want)
		})
		if log := machines[c[0]].out.String(); !strings.Contains(log, "maps a channel this machine maps") || !strings.Contains(log, "machine="+c[1]) {
			t.Errorf("%s logged no warning about %s:\n%s", c[0], c[1], log)
		}
	}
}
