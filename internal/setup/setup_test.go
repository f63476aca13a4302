package setup

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
	"github.com/ccbridge/ccbridge/internal/testutil/testenv"
)

// step is one answer; before runs first (what the person does in Discord
// or the portal before typing it).
type step struct {
	line   string
	before func()
}

// script is stdin that hands out one line per Read, running each step's
// action just before its line is read.
type script struct {
	mu    sync.Mutex
	steps []step
}

func (s *script) Read(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.steps) == 0 {
		return 0, io.EOF
	}
	st := s.steps[0]
	s.steps = s.steps[1:]
	if st.before != nil {
		st.before()
	}
	return copy(p, st.line+"\n"), nil
}

func lines(ls ...string) []step {
	out := make([]step, len(ls))
	for i, l := range ls {
		out[i] = step{line: l}
	}
	return out
}

type fixture struct {
	srv   *fakediscord.Server
	bot   *fakediscord.Bot
	owner fakediscord.User
	dir   string
	cfg   string
	home  string
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{srv: fakediscord.New(t)}
	f.bot = f.srv.Main()
	f.owner = f.srv.NewUser("owner")
	f.srv.SetAppOwner(f.bot, f.owner.ID)
	f.dir = t.TempDir()
	f.home = filepath.Join(f.dir, "home")
	t.Setenv("HOME", f.home)
	f.cfg = filepath.Join(f.dir, "cfg", "config.toml")
	_ = os.MkdirAll(filepath.Dir(f.cfg), 0o700)
	// The config's api_base is how setup finds the (fake) Discord.
	if err := os.WriteFile(f.cfg, []byte("[discord]\napi_base = \""+f.srv.URL+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) run(t *testing.T, steps []step, wait time.Duration) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := Run(context.Background(), Options{ConfigPath: f.cfg, In: &script{steps: steps}, Out: &out, PollEvery: 5 * time.Millisecond, Wait: wait})
	return out.String(), err
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func TestSetupFirstRun(t *testing.T) {
	f := newFixture(t)
	proj := filepath.Join(f.dir, "src", "api")
	_ = os.MkdirAll(proj, 0o755)
	f.srv.SetMessageContentIntent(f.bot, false)
	f.srv.LeaveGuild(f.bot)
	api := f.srv.AddChannel(f.bot.GuildID, "api")
	steps := []step{
		{line: "bot " + f.bot.Token}, // pasted with a "Bot " prefix
		{line: "home"},
		// The intent is off: the person enables it, then presses Enter.
		{line: "", before: func() { f.srv.SetMessageContentIntent(f.bot, true) }},
		{line: ""}, // the owner: the application's owner
		{line: "2"},
		{line: proj},
		{line: ""},
		{line: ""}, // no control panel
	}
	// Join only once the wizard has looked and found no server.
	go func() {
		if f.srv.WaitCall("GET", "/users/@me/guilds", 2, 5*time.Second) {
			f.srv.JoinGuild(f.bot)
		}
	}()
	out, err := f.run(t, steps, 10*time.Second)
	if err != nil {
		t.Fatalf("setup: %v\n%s", err, out)
	}
	for _, want := range []string{"the bot is main-bot", "Message Content Intent is OFF", "Message Content Intent: enabled",
		"permissions=395137109056", "Waiting for the bot to join", "#api", "every member of", "config OK"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, f.bot.Token) {
		t.Error("the token was echoed")
	}
	c, err := config.Load(f.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("written config does not pass config check: %v", err)
	}
	s := c.Servers[0]
	if s.Name != "home" || s.GuildID != f.bot.GuildID || len(s.OwnerIDs) != 1 || s.OwnerIDs[0] != f.owner.ID ||
		len(s.Projects) != 1 || s.Projects[0].ChannelID != api || s.Projects[0].Path != proj || s.Projects[0].Name != "api" {
		t.Errorf("server %+v", s)
	}
	if c.Discord.APIBase != f.srv.URL {
		t.Errorf("api_base %q lost", c.Discord.APIBase)
	}
	tok, err := s.ResolveToken()
	if err != nil || tok != f.bot.Token {
		t.Errorf("token %q %v", tok, err)
	}
	if m := mode(t, f.cfg); m != 0o600 {
		t.Errorf("config mode %o", m)
	}
	if m := mode(t, filepath.Join(filepath.Dir(f.cfg), "home.token")); m != 0o600 {
		t.Errorf("token file mode %o", m)
	}
}

// Re-running keeps every key of the config (also ones setup never asks
// about), keeps the token on Enter, and adds a project.
func TestSetupRerunKeepsEverything(t *testing.T) {
	f := newFixture(t)
	old := filepath.Join(f.dir, "old")
	web := filepath.Join(f.dir, "web")
	_ = os.MkdirAll(old, 0o755)
	_ = os.MkdirAll(web, 0o755)
	t.Setenv("CCBRIDGE_SETUP_TEST_TOKEN", f.bot.Token)
	webCh := f.srv.AddChannel(f.bot.GuildID, "web")
	existing := `# my comment
[discord]
api_base = "` + f.srv.URL + `"
[tmux]
socket = "mine"
[claude]
args = ["--verbose"]
env = { FOO = "bar" }
prompt_timeout = "10m"
[[servers]]
name = "work"
token_env = "CCBRIDGE_SETUP_TEST_TOKEN"
guild_id = "` + f.bot.GuildID + `"
owner_ids = ["100000000000000042"]
general_channel_id = "` + f.bot.ChannelID + `"
  [[servers.projects]]
  name = "old"
  channel_id = "100000000000000043"
  path = "` + old + `"
  model = "opus"
    [servers.projects.thread]
    isolation = "worktree"
`
	if err := os.WriteFile(f.cfg, []byte(existing), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := f.run(t, lines("", "", "2", web, ""), time.Second)
	if err != nil {
		t.Fatalf("setup: %v\n%s", err, out)
	}
	if !strings.Contains(out, "→ control panel") {
		t.Errorf("the panel channel is not shown as such:\n%s", out)
	}
	c, err := config.Load(f.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("config check: %v", err)
	}
	s := c.Servers[0]
	if c.Tmux.Socket != "mine" || len(c.Claude.Args) != 1 || c.Claude.Env["FOO"] != "bar" || c.Claude.PromptTimeout.Duration != 10*time.Minute ||
		s.Name != "work" || s.TokenEnv != "CCBRIDGE_SETUP_TEST_TOKEN" || s.TokenFile != "" || s.GeneralChannelID != f.bot.ChannelID ||
		len(s.OwnerIDs) != 1 || s.OwnerIDs[0] != "100000000000000042" {
		t.Errorf("a key was lost: %+v %+v", c, s)
	}
	if len(s.Projects) != 2 || s.Projects[0].Model != "opus" || s.Projects[0].Thread.Isolation != "worktree" ||
		s.Projects[1].ChannelID != webCh || s.Projects[1].Path != web {
		t.Errorf("projects %+v", s.Projects)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(f.cfg), "work.token")); err == nil {
		t.Error("a token file was written although the token was kept")
	}
	if b, _ := os.ReadFile(f.cfg + ".bak"); string(b) != existing {
		t.Error("no backup of the previous config")
	}
	if m := mode(t, f.cfg); m != 0o600 {
		t.Errorf("config mode %o", m)
	}
	// A second run keeps the backup of the hand-written original, comments
	// and all, instead of overwriting it with the file setup wrote.
	if out, err := f.run(t, lines("", "", "", ""), time.Second); err != nil {
		t.Fatalf("second setup: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(f.cfg + ".bak"); string(b) != existing {
		t.Errorf("the second run lost the original's backup:\n%s", b)
	}
}

func TestSetupTimesOutWhenTheBotNeverJoins(t *testing.T) {
	f := newFixture(t)
	f.srv.LeaveGuild(f.bot)
	before, _ := os.ReadFile(f.cfg)
	out, err := f.run(t, lines(f.bot.Token, "home"), 50*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "has not joined a server within") || !strings.Contains(err.Error(), "run `ccbridge setup` again") {
		t.Fatalf("err = %v\n%s", err, out)
	}
	if after, _ := os.ReadFile(f.cfg); !bytes.Equal(before, after) {
		t.Error("config changed by a setup that did not finish")
	}
}

func TestSetupRetriesARefusedToken(t *testing.T) {
	f := newFixture(t)
	proj := t.TempDir()
	out, err := f.run(t, lines("not-a-token", f.bot.Token, "home", "", "1", proj, "", ""), time.Second)
	if err != nil {
		t.Fatalf("setup: %v\n%s", err, out)
	}
	if !strings.Contains(out, "Discord refused this token (HTTP 401)") {
		t.Errorf("no word about the refused token:\n%s", out)
	}
}

func TestSetupCreatesAChannelOrSaysWhyNot(t *testing.T) {
	f := newFixture(t)
	proj := t.TempDir()
	// Without Manage Channels (the invite's set) creation is refused with
	// advice; once the person created it, it is listed and mapped.
	out, err := f.run(t, []step{{line: f.bot.Token}, {line: "home"}, {line: ""}, {line: "Docs Site"},
		{line: "", before: func() { f.srv.AddChannel(f.bot.GuildID, "docs-site") }}, {line: proj}, {line: ""}, {line: ""}}, time.Second)
	if err != nil || !strings.Contains(out, "may not create channels") {
		t.Fatalf("setup: %v\n%s", err, out)
	}
	// With Manage Channels the bot creates it.
	f2 := newFixture(t)
	f2.srv.SetBotPermissions(f2.bot, fakediscord.PermInvite|fakediscord.PermManageChannels)
	out, err = f2.run(t, lines(f2.bot.Token, "home", "", "Docs Site", proj, "", ""), time.Second)
	if err != nil || !strings.Contains(out, "Created #docs-site") {
		t.Fatalf("setup: %v\n%s", err, out)
	}
	c, _ := config.Load(f2.cfg)
	if len(c.Servers[0].Projects) != 1 || c.Servers[0].Projects[0].Name != "docs-site" {
		t.Fatalf("projects %+v", c.Servers[0].Projects)
	}
	// The channel is the owners': hidden from the rest of the server.
	ch := c.Servers[0].Projects[0].ChannelID
	if !f2.srv.CanView(f2.bot, ch, f2.owner.ID) || !f2.srv.CanView(f2.bot, ch, f2.bot.UserID) || f2.srv.CanView(f2.bot, ch, f2.srv.NewUser("member").ID) {
		t.Errorf("#docs-site: owner %v, bot %v, another member %v (want true, true, false)", f2.srv.CanView(f2.bot, ch, f2.owner.ID),
			f2.srv.CanView(f2.bot, ch, f2.bot.UserID), f2.srv.CanView(f2.bot, ch, f2.srv.NewUser("member").ID))
	}
}

// A name Discord refuses (here "#", which leaves an empty name: 400
// 50035) is explained and asked again; the answers so far are kept.
func TestSetupAsksAgainForARefusedChannelName(t *testing.T) {
	f := newFixture(t)
	f.srv.InvalidBodiesExpected.Store(true) // "#" is a name Discord refuses, on purpose
	proj := t.TempDir()
	f.srv.SetBotPermissions(f.bot, fakediscord.PermInvite|fakediscord.PermManageChannels)
	out, err := f.run(t, lines(f.bot.Token, "home", "", "#", "Docs", proj, "", ""), time.Second)
	if err != nil {
		t.Fatalf("setup: %v\n%s", err, out)
	}
	if !strings.Contains(out, "Discord refused to create #") || !strings.Contains(out, "Created #docs") {
		t.Errorf("output:\n%s", out)
	}
	c, _ := config.Load(f.cfg)
	if len(c.Servers) != 1 || len(c.Servers[0].Projects) != 1 || c.Servers[0].Projects[0].Name != "docs" {
		t.Errorf("servers %+v", c.Servers)
	}
}

func TestSetupLeavesAnUnreadableConfigAlone(t *testing.T) {
	f := newFixture(t)
	bad := "[discord]\napi_base = \"" + f.srv.URL + "\"\nmystery = 1\n"
	_ = os.WriteFile(f.cfg, []byte(bad), 0o600)
	_, err := f.run(t, nil, time.Second)
	if err == nil || !strings.Contains(err.Error(), "discord.mystery") {
		t.Fatalf("err = %v", err)
	}
	if b, _ := os.ReadFile(f.cfg); string(b) != bad {
		t.Error("config rewritten")
	}
}

// An entry for another server (here the example's placeholders) is
// forgotten only when the person types y: its owners and projects go, the
// other settings stay.
func TestSetupForgetsAnotherServersEntryOnlyOnYes(t *testing.T) {
	f := newFixture(t)
	t.Setenv("CCBRIDGE_TOKEN_HOME", "")
	example, err := os.ReadFile("../../config.example.toml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(example), `api_base = "https://discord.com"`, `api_base = "`+f.srv.URL+`"`, 1)
	_ = os.WriteFile(f.cfg, []byte(text), 0o600)
	proj := t.TempDir()
	out, err := f.run(t, lines(f.bot.Token, "y", "", "1", proj, "", ""), time.Second)
	if err != nil {
		t.Fatalf("setup: %v\n%s", err, out)
	}
	if !strings.Contains(out, `The entry "home" is for server 100000000000000001`) || !strings.Contains(out, "(y/N)") {
		t.Errorf("no word about the other server, or a default other than no:\n%s", out)
	}
	c, err := config.Load(f.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("config check: %v", err)
	}
	s := c.Servers[0]
	if len(c.Servers) != 1 || s.Name != "home" || s.GuildID != f.bot.GuildID || len(s.OwnerIDs) != 1 || s.OwnerIDs[0] != f.owner.ID || s.TokenEnv != "" ||
		len(s.Projects) != 1 || s.Projects[0].ChannelID != f.bot.ChannelID {
		t.Errorf("placeholders kept: %+v", c.Servers)
	}
	if c.Claude.Command != "claude" || c.Tmux.Socket != "ccbridge" || c.Claude.StartTimeout.Duration != 90*time.Second {
		t.Errorf("the example's other settings were lost: %+v", c)
	}
}

// The token file is written as ~/… when it is under the home directory.
func TestTokenFileUnderHomeIsWrittenWithTilde(t *testing.T) {
	t.Setenv("HOME", "/home/alice")
	if got := tildePath("/home/alice/.config/ccbridge/home.token"); got != "~/.config/ccbridge/home.token" {
		t.Errorf("tildePath = %q", got)
	}
	if got := tildePath("/srv/x.token"); got != "/srv/x.token" {
		t.Errorf("tildePath = %q", got)
	}
}

// Ctrl-C at a prompt ends setup at once (the signal is caught, so a read
// that ignored it would hang until Enter), and nothing is written.
func TestSetupStopsAtAPromptWhenInterrupted(t *testing.T) {
	f := newFixture(t)
	before, _ := os.ReadFile(f.cfg)
	pr, pw := io.Pipe() // a person who types nothing
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var out testenv.SyncBuffer
	done := make(chan error, 1)
	go func() { done <- Run(ctx, Options{ConfigPath: f.cfg, In: pr, Out: &out}) }()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(out.String(), "Bot token") && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("setup still waits for input after Ctrl-C")
	}
	if after, _ := os.ReadFile(f.cfg); !bytes.Equal(before, after) {
		t.Error("config changed")
	}
}

// existingHome is a config with the main bot's entry "home": its token from
// the environment, its server, an owner, the panel and one project.
func existingHome(t *testing.T, f *fixture) string {
	t.Helper()
	t.Setenv("CCBRIDGE_SETUP_TEST_TOKEN", f.bot.Token)
	proj := t.TempDir()
	text := `[discord]
api_base = "` + f.srv.URL + `"

[[servers]]
name = "home"
token_env = "CCBRIDGE_SETUP_TEST_TOKEN"
guild_id = "` + f.bot.GuildID + `"
owner_ids = ["` + f.owner.ID + `"]
general_channel_id = "` + f.bot.ChannelID + `"

  [[servers.projects]]
  name = "api"
  channel_id = "` + f.srv.AddChannel(f.bot.GuildID, "api") + `"
  path = "` + proj + `"
`
	if err := os.WriteFile(f.cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return text
}

// The token of a bot the config does not have adds an entry for it (its
// name asked); the existing bot's entry, owners, panel and projects stay.
func TestSetupAnotherBotsTokenAddsAnEntry(t *testing.T) {
	f := newFixture(t)
	existingHome(t, f)
	before, err := config.Load(f.cfg)
	if err != nil {
		t.Fatal(err)
	}
	other := f.srv.NewBot("work-bot")
	f.srv.SetAppOwner(other, f.owner.ID)
	proj := t.TempDir()
	out, err := f.run(t, lines(other.Token, "home", "work", "", "1", proj, "", ""), time.Second)
	if err != nil {
		t.Fatalf("setup: %v\n%s", err, out)
	}
	if !strings.Contains(out, `not for the bot of "home"`) {
		t.Errorf("no word that this is another bot:\n%s", out)
	}
	c, err := config.Load(f.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("config check: %v", err)
	}
	if len(c.Servers) != 2 || !reflect.DeepEqual(c.Servers[0], before.Servers[0]) {
		t.Fatalf("the existing entry changed:\nbefore %+v\nafter  %+v", before.Servers, c.Servers)
	}
	s := c.Servers[1]
	if !strings.Contains(out, `already has a bot named "home"`) {
		t.Errorf("a taken name was not refused:\n%s", out)
	}
	if s.Name != "work" || s.GuildID != other.GuildID || len(s.Projects) != 1 || s.Projects[0].ChannelID != other.ChannelID {
		t.Errorf("new entry %+v", s)
	}
	if tok, err := s.ResolveToken(); err != nil || tok != other.Token {
		t.Errorf("new entry's token %q %v", tok, err)
	}
}

// The same bot in another server: Enter (the default) adds an entry for
// that server and keeps the old one whole.
func TestSetupAnotherServerKeepsTheEntryByDefault(t *testing.T) {
	f := newFixture(t)
	text := existingHome(t, f)
	_ = os.WriteFile(f.cfg, []byte(strings.Replace(text, `guild_id = "`+f.bot.GuildID+`"`, `guild_id = "100000000000000077"`, 1)), 0o600)
	before, err := config.Load(f.cfg)
	if err != nil {
		t.Fatal(err)
	}
	proj := t.TempDir()
	web := f.srv.AddChannel(f.bot.GuildID, "web")
	out, err := f.run(t, lines("", "", "", "", "3", proj, "", ""), time.Second)
	if err != nil {
		t.Fatalf("setup: %v\n%s", err, out)
	}
	c, err := config.Load(f.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Servers) != 2 || !reflect.DeepEqual(c.Servers[0], before.Servers[0]) {
		t.Fatalf("the existing entry changed:\nbefore %+v\nafter  %+v", before.Servers, c.Servers)
	}
	if s := c.Servers[1]; s.GuildID != f.bot.GuildID || s.TokenEnv != "CCBRIDGE_SETUP_TEST_TOKEN" || len(s.Projects) != 1 || s.Projects[0].ChannelID != web {
		t.Errorf("new entry %+v", s)
	}
}

// A config directory linked into a git work tree (dotfiles) does not get
// the token: it goes to the state directory, and setup says why.
func TestSetupKeepsTheTokenOutOfAGitTree(t *testing.T) {
	f := newFixture(t)
	repo := filepath.Join(f.dir, "dotfiles")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	// ~/.config/ccbridge → dotfiles/ccbridge, as GNU stow links it.
	linked := filepath.Join(f.dir, "linked")
	_ = os.Rename(filepath.Dir(f.cfg), filepath.Join(repo, "ccbridge"))
	if err := os.Symlink(filepath.Join(repo, "ccbridge"), linked); err != nil {
		t.Fatal(err)
	}
	f.cfg = filepath.Join(linked, "config.toml")
	stateDir := filepath.Join(f.dir, "state")
	t.Setenv("XDG_STATE_HOME", stateDir)
	proj := t.TempDir()
	out, err := f.run(t, lines(f.bot.Token, "home", "", "1", proj, "", ""), time.Second)
	if err != nil {
		t.Fatalf("setup: %v\n%s", err, out)
	}
	if !strings.Contains(out, "inside the git work tree") {
		t.Errorf("no word about the git tree:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(repo, "ccbridge", "home.token")); err == nil {
		t.Error("the token was written into the git work tree")
	}
	want := filepath.Join(stateDir, "ccbridge", "home.token")
	if b, err := os.ReadFile(want); err != nil || strings.TrimSpace(string(b)) != f.bot.Token {
		t.Errorf("token not in %s: %q %v", want, b, err)
	}
	c, _ := config.Load(f.cfg)
	if tok, err := c.Servers[0].ResolveToken(); err != nil || tok != f.bot.Token {
		t.Errorf("the config does not find the token: %q %v", tok, err)
	}
}

// On a network that does not answer, setup says what it checks before the
// wait, and then that Discord, at the configured host, did not answer.
func TestSetupSaysWhatItWaitsFor(t *testing.T) {
	f := newFixture(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	hole := "http://" + ln.Addr().String()
	_ = os.WriteFile(f.cfg, []byte("[discord]\napi_base = \""+hole+"\"\n"), 0o600)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var out bytes.Buffer
	err = Run(ctx, Options{ConfigPath: f.cfg, In: &script{steps: lines("tok")}, Out: &out})
	if err == nil || !strings.Contains(err.Error(), "Discord did not answer in") || !strings.Contains(err.Error(), hole) || strings.Contains(err.Error(), "discord.com") {
		t.Errorf("err = %v", err)
	}
	if !strings.Contains(out.String(), "Checking the token with Discord ("+hole+")…") {
		t.Errorf("no word of what is checked:\n%s", out.String())
	}
}

// With open_roots, /open works in the panel channel: setup says when every
// member can read it (security-3 #3), and not otherwise.
func TestSetupWarnsAboutAPublicPanelChannelWithOpenRoots(t *testing.T) {
	for _, roots := range []bool{true, false} {
		f := newFixture(t)
		api := filepath.Join(f.dir, "api")
		_ = os.MkdirAll(api, 0o755)
		t.Setenv("CCBRIDGE_SETUP_TEST_TOKEN", f.bot.Token)
		apiCh := f.srv.AddChannel(f.bot.GuildID, "api")
		openRoots := ""
		if roots {
			openRoots = "open_roots = [\"" + f.dir + "\"]\n"
		}
		existing := `[discord]
api_base = "` + f.srv.URL + `"
[[servers]]
name = "work"
token_env = "CCBRIDGE_SETUP_TEST_TOKEN"
guild_id = "` + f.bot.GuildID + `"
owner_ids = ["100000000000000042"]
general_channel_id = "` + f.bot.ChannelID + `"
` + openRoots + `
  [[servers.projects]]
  name = "api"
  channel_id = "` + apiCh + `"
  path = "` + api + `"
`
		if err := os.WriteFile(f.cfg, []byte(existing), 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := f.run(t, lines("", "", "", ""), time.Second)
		if err != nil {
			t.Fatalf("setup: %v\n%s", err, out)
		}
		const note = "can read #general, the control-panel channel, where /open works"
		if got := strings.Contains(out, note); got != roots {
			t.Errorf("open_roots %v: note shown %v:\n%s", roots, got, out)
		}
	}
}

// Re-run while the daemon runs, setup says the change is picked up live
// (first-contact-2 §1), not that `ccbridge run` starts the bridge.
func TestSetupEpilogueSaysTheDaemonReloads(t *testing.T) {
	running := epilogue(true, false)
	for _, want := range []string{"ccbridge is running", "without a restart", "needs a restart"} {
		if !strings.Contains(running, want) {
			t.Errorf("epilogue with a daemon running lacks %q: %s", want, running)
		}
	}
	if strings.Contains(running, "`ccbridge run` starts the bridge") {
		t.Errorf("epilogue with a daemon running asks to start it: %s", running)
	}
	stopped := epilogue(false, false)
	for _, want := range []string{"`ccbridge run` starts the bridge", "applies later edits of the config by itself"} {
		if !strings.Contains(stopped, want) {
			t.Errorf("epilogue without a daemon lacks %q: %s", want, stopped)
		}
	}
}
