//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/execx"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/testutil/claudetest"
	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
	"github.com/ccbridge/ccbridge/internal/testutil/fakemodel"
	"github.com/ccbridge/ccbridge/internal/testutil/testenv"
	"github.com/ccbridge/ccbridge/internal/tmux"
)

// long is how long e2e waits for anything Claude does.
const long = 90 * time.Second

var socketSeq atomic.Int64

// project is one configured project of a bridge.
type project struct {
	bot     *fakediscord.Bot
	name    string
	channel string
	dir     string
	key     string // session key
	speaker string // what ccbridge's notices call its agent ("": Claude)
}

// agentSays is how ccbridge's notices name the project's agent.
func (p *project) agentSays() string {
	if p.speaker == "" {
		return "Claude"
	}
	return p.speaker
}

// bridge is a running ccbridge daemon wired to a fake Discord and a fake
// model, with the real Claude Code CLI in a private tmux server.
type bridge struct {
	t        testing.TB
	srv      *fakediscord.Server
	model    *fakemodel.Server
	owner    fakediscord.User
	projects []*project
	cfg      string
	env      []string
	runtime  string
	stateDir string
	socket   string
	tmux     *tmux.Server
	store    *state.Store
	cmd      *exec.Cmd
	out      *testenv.SyncBuffer
}

// newBridge configures bots × projectsPerBot projects and starts the daemon.
func newBridge(t testing.TB, bots, projectsPerBot int, extra string) *bridge {
	t.Helper()
	claude := claudetest.Binary(t)
	b := &bridge{t: t, srv: fakediscord.New(t), model: fakemodel.New(t)}
	b.owner = b.srv.NewUser("owner")
	base := b.newTmux()
	var dirs []string
	var servers strings.Builder
	for i := range bots {
		bot := b.srv.Main()
		if i > 0 {
			bot = b.srv.NewBot(fmt.Sprintf("bot%d", i))
		}
		envName := fmt.Sprintf("CCBRIDGE_E2E_TOKEN_%d", i)
		b.env = append(b.env, envName+"="+bot.Token)
		fmt.Fprintf(&servers, "[[servers]]\nname = %q\ntoken_env = %q\nguild_id = %q\nowner_ids = [%q]\n", bot.Name, envName, bot.GuildID, b.owner.ID)
		for j := range projectsPerBot {
			p := &project{bot: bot, name: fmt.Sprintf("p%d", j), dir: filepath.Join(base, fmt.Sprintf("%s-p%d", bot.Name, j))}
			p.channel = bot.ChannelID
			if j > 0 {
				p.channel = b.srv.AddChannel(bot.GuildID, p.name)
			}
			p.key = bot.Name + "-" + p.name
			if err := os.MkdirAll(p.dir, 0o755); err != nil {
				t.Fatal(err)
			}
			dirs = append(dirs, p.dir)
			b.projects = append(b.projects, p)
			// The product's defaults: a scenario about a setting sets it
			// (turnOn).
			fmt.Fprintf(&servers, "  [[servers.projects]]\n  name = %q\n  channel_id = %q\n  path = %q\n", p.name, p.channel, p.dir)
		}
	}
	home := claudeHomeIn(t, base, dirs...)
	var env []string
	for k, v := range claudetest.Env(home, b.model.URL) {
		env = append(env, fmt.Sprintf("%s = %q", k, v))
	}
	cfg := fmt.Sprintf("[discord]\napi_base = %q\n[tmux]\nsocket = %q\n[claude]\ncommand = %q\npermission_mode = \"default\"\nenv = { %s }\n%s\n%s",
		b.srv.URL, b.socket, claude, strings.Join(env, ", "), extra, servers.String())
	b.configure(base, cfg)
	b.start()
	return b
}

// newTmux gives the bridge a private tmux server and returns the base
// directory of its runtime and state directories and of what the test
// makes.
func (b *bridge) newTmux() (base string) {
	b.t.Helper()
	b.socket = fmt.Sprintf("ccbe2e-%d-%d", os.Getpid(), socketSeq.Add(1))
	b.tmux = tmux.New(execx.Exec{}, tmux.Options{Socket: b.socket})
	base = settledTempDir(b.t)
	// Registered after base, so run before its removal: Claude is gone first.
	b.t.Cleanup(func() { _ = b.tmux.KillServer(context.Background()) })
	b.runtime, b.stateDir = filepath.Join(base, "rt"), filepath.Join(base, "state")
	return base
}

// configure writes the daemon's config in base and opens the runtime
// state the test reads.
func (b *bridge) configure(base, cfg string) {
	b.t.Helper()
	b.cfg = filepath.Join(base, "config.toml")
	if err := os.WriteFile(b.cfg, []byte(cfg), 0o600); err != nil {
		b.t.Fatal(err)
	}
	var err error
	if b.store, err = state.OpenStore(b.runtime); err != nil {
		b.t.Fatal(err)
	}
}

// start runs the daemon and waits until every bot is connected.
func (b *bridge) start() {
	b.t.Helper()
	b.cmd = exec.Command(bins.bridge, "run", "--config", b.cfg)
	b.cmd.Env = append(append(os.Environ(), "CCBRIDGE_RUNTIME_DIR="+b.runtime, "XDG_STATE_HOME="+b.stateDir), b.env...)
	b.out = &testenv.SyncBuffer{}
	b.cmd.Stdout, b.cmd.Stderr = b.out, b.out
	if err := b.cmd.Start(); err != nil {
		b.t.Fatal(err)
	}
	cmd := b.cmd
	b.t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
		if b.t.Failed() {
			b.t.Logf("daemon output:\n%s", b.out.String())
			if log, err := os.ReadFile(filepath.Join(b.runtime, "logs", "hook.log")); err == nil {
				b.t.Logf("hook.log:\n%s", log)
			}
			for _, p := range b.panes() {
				if screen, err := b.tmux.Capture(context.Background(), p.ID, 0); err == nil {
					b.t.Logf("screen of %s (%s):\n%s", p.ID, p.Window, strings.TrimRight(screen, "\n "))
				}
			}
		}
	})
	waitOutput(b.t, b.out, "ccbridge running", 20*time.Second)
	for _, p := range b.projects {
		if !b.srv.WaitConnected(p.bot, 10*time.Second) {
			b.t.Fatalf("bot %s never connected", p.bot.Name)
		}
	}
	// Slash commands are registered right after READY.
	deadline := time.Now().Add(10 * time.Second)
	for _, p := range b.projects {
		for len(b.srv.Commands(p.bot.GuildID)) == 0 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// kill stops the daemon with SIGKILL, as a crash would.
func (b *bridge) kill() {
	b.t.Helper()
	_ = b.cmd.Process.Kill()
	_ = b.cmd.Wait()
}

// say posts an owner's message and returns it.
func (b *bridge) say(p *project, text string, files ...fakediscord.File) *fakediscord.Message {
	return b.srv.Post(p.channel, b.owner, text, files...)
}

// botMessages returns the bot's messages in a channel, in order.
func (b *bridge) botMessages(channel string) []*fakediscord.Message {
	var out []*fakediscord.Message
	for _, m := range b.srv.Messages(channel) {
		if m.Author.Bot && !m.Deleted && m.Interaction == "" {
			out = append(out, m)
		}
	}
	return out
}

// contents returns the texts of the bot's messages in a channel, in order.
func (b *bridge) contents(channel string) []string {
	var out []string
	for _, m := range b.botMessages(channel) {
		out = append(out, m.Content)
	}
	return out
}

// bodies are the bot's messages in a channel without the footer a reply
// ends with by default.
func (b *bridge) bodies(channel string) []string {
	var out []string
	for _, c := range b.contents(channel) {
		out = append(out, body(c))
	}
	return out
}

// body is a message's text without its footer: a last line "-# …".
func body(content string) string {
	if i := strings.LastIndex(content, "\n-# "); i >= 0 && !strings.Contains(content[i+1:], "\n") {
		return content[:i]
	}
	return content
}

// waitReply waits for a bot message in the channel containing want.
func (b *bridge) waitReply(p *project, want string) *fakediscord.Message {
	b.t.Helper()
	return b.srv.WaitMessage(long, fmt.Sprintf("containing %q in %s", want, p.name), func(m *fakediscord.Message) bool {
		return m.ChannelID == p.channel && m.Author.Bot && strings.Contains(m.Content, want)
	})
}

// waitReaction waits until the bot reacted to a message with emoji.
func (b *bridge) waitReaction(m *fakediscord.Message, emoji string) {
	b.t.Helper()
	deadline := time.Now().Add(long)
	for time.Now().Before(deadline) {
		if cur, ok := b.srv.Message(m.ID); ok && contains(cur.Reactions, emoji) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	cur, _ := b.srv.Message(m.ID)
	b.t.Fatalf("message %q never got %s (reactions %v)", m.Content, emoji, cur.Reactions)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// panes lists the live panes of the bridge's tmux server.
func (b *bridge) panes() []tmux.Pane {
	panes, _ := b.tmux.ListPanes(context.Background())
	return panes
}

// instance is the daemon's instance id (in every custom_id it makes).
func (b *bridge) instance() string {
	raw, err := os.ReadFile(filepath.Join(b.stateDir, "ccbridge", "instance-id"))
	if err != nil {
		b.t.Fatal(err)
	}
	return strings.TrimSpace(string(raw))
}

// waitCard waits for a prompt card (a bot message whose buttons belong to
// a request) in the project's channel satisfying pred.
func (b *bridge) waitCard(p *project, what string, pred func(*fakediscord.Message) bool) *fakediscord.Message {
	b.t.Helper()
	return b.srv.WaitMessage(long, what, func(m *fakediscord.Message) bool {
		if m.ChannelID != p.channel || !m.Author.Bot {
			return false
		}
		for _, id := range m.CustomIDs() {
			if strings.Contains(id, "|p|") {
				return pred(m)
			}
		}
		return false
	})
}

// action returns the custom_id of the card component for an action.
func action(t testing.TB, card *fakediscord.Message, name string) string {
	t.Helper()
	for _, id := range card.CustomIDs() {
		parts := strings.Split(id, "|")
		if len(parts) >= 5 && parts[2] == "p" && parts[4] == name {
			return id
		}
	}
	t.Fatalf("card has no %q action: %q", name, card.CustomIDs())
	return ""
}

// cardNow returns the card as it stands.
func (b *bridge) cardNow(card *fakediscord.Message) *fakediscord.Message {
	m, _ := b.srv.Message(card.ID)
	return m
}

// waitCardText waits until the card's text contains want.
func (b *bridge) waitCardText(card *fakediscord.Message, want string) *fakediscord.Message {
	b.t.Helper()
	return b.srv.WaitMessage(long, fmt.Sprintf("card %s saying %q", card.ID, want), func(m *fakediscord.Message) bool {
		return m.ID == card.ID && strings.Contains(m.Content, want)
	})
}

// reconfigure rewrites the config and restarts the daemon.
func (b *bridge) reconfigure(edit func(string) string) {
	b.t.Helper()
	cfg, err := os.ReadFile(b.cfg)
	if err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(b.cfg, []byte(edit(string(cfg))), 0o600); err != nil {
		b.t.Fatal(err)
	}
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	_ = b.cmd.Wait()
	b.start()
}

// settledTempDir is a temporary directory for what Claude and the hooks write:
// after the tmux server is killed, SessionEnd hooks and Claude's children
// still write there for a moment, which t.TempDir's cleanup reports as a
// failure. It is removed once nothing writes there any more.
func settledTempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "ccbe2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		deadline := time.Now().Add(10 * time.Second)
		for os.RemoveAll(dir) != nil && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
	})
	return dir
}

// claudeHomeIn is claudetest.NewHome inside base (see settledTempDir).
func claudeHomeIn(t testing.TB, base string, dirs ...string) string {
	t.Helper()
	src := claudetest.NewHome(t, dirs...)
	home := filepath.Join(base, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(src, ".claude.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}
