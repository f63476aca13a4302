package setup

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/config"
)

// The token comes first, as the README's list says: the name of a new
// entry is asked once it is known which bot it is.
func TestSetupAsksTheTokenFirst(t *testing.T) {
	f := newFixture(t)
	proj := t.TempDir()
	out, err := f.run(t, lines(f.bot.Token, "", "", "1", proj, "", ""), time.Second)
	if err != nil {
		t.Fatalf("setup: %v\n%s", err, out)
	}
	tok, name := strings.Index(out, "Bot token"), strings.Index(out, "A short name for this bot")
	if tok < 0 || name < 0 || tok > name || !strings.Contains(out, "A short name for this bot (letters, digits, - and _) [home]") {
		t.Errorf("token at %d, name at %d:\n%s", tok, name, out)
	}
}

// Setup with the token of a bot the config already has edits that bot's
// entry: a second entry would open a second gateway session of one bot.
func TestSetupTokenOfAConfiguredBotEditsItsEntry(t *testing.T) {
	f := newFixture(t)
	text := existingHome(t, f)
	other := f.srv.NewBot("work-bot")
	f.srv.SetAppOwner(other, f.owner.ID)
	t.Setenv("CCBRIDGE_SETUP_TEST_WORK", other.Token)
	text += `
[[servers]]
name = "work"
token_env = "CCBRIDGE_SETUP_TEST_WORK"
guild_id = "` + other.GuildID + `"
owner_ids = ["` + f.owner.ID + `"]
general_channel_id = "` + other.ChannelID + `"

  [[servers.projects]]
  name = "w"
  channel_id = "` + f.srv.AddChannel(other.GuildID, "w") + `"
  path = "` + t.TempDir() + `"
`
	_ = os.WriteFile(f.cfg, []byte(text), 0o600)
	// Entry 1 (home) is picked, but the token typed is work's bot's.
	out, err := f.run(t, lines("1", other.Token, "", "", ""), time.Second)
	if err != nil {
		t.Fatalf("setup: %v\n%s", err, out)
	}
	if !strings.Contains(out, `the config has it as "work": editing that entry`) {
		t.Errorf("no word about the entry edited:\n%s", out)
	}
	c, err := config.Load(f.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Servers) != 2 || c.Servers[1].Name != "work" {
		t.Fatalf("servers: %+v", c.Servers)
	}
	if tok, err := c.Servers[1].ResolveToken(); err != nil || tok != other.Token {
		t.Errorf("work's token %q %v", tok, err)
	}
	if tok, _ := c.Servers[0].ResolveToken(); tok != f.bot.Token {
		t.Errorf("home's token changed to %q", tok)
	}
}

// After "create it yourself, then press Enter", setup finds the channel by
// the name it was given and maps it: no list to pick from again.
func TestSetupFindsTheChannelYouCreated(t *testing.T) {
	f := newFixture(t)
	proj := t.TempDir()
	out, err := f.run(t, []step{{line: f.bot.Token}, {line: "home"}, {line: ""}, {line: "Docs Site"},
		{line: "", before: func() { f.srv.AddChannel(f.bot.GuildID, "docs-site") }}, {line: proj}, {line: ""}, {line: ""}}, time.Second)
	if err != nil {
		t.Fatalf("setup: %v\n%s", err, out)
	}
	c, _ := config.Load(f.cfg)
	if p := c.Servers[0].Projects; len(p) != 1 || p[0].Name != "docs-site" || p[0].Path != proj {
		t.Errorf("projects %+v\n%s", p, out)
	}
}

// Paths are stored clean, in the ~/ form when typed so and under home.
func TestSetupStoresCleanPaths(t *testing.T) {
	for typed, want := range map[string]string{
		"~/src/../api/":       "~/api",
		"~/../../srv/x":       "<home>/../../srv/x",
		"/srv//y/./z/../w":    "/srv/y/w",
		"~/":                  "~",
		"~/a/./b":             "~/a/b",
		"/home/nobody/../x/y": "/home/x/y",
	} {
		f := newFixture(t)
		if rest, ok := strings.CutPrefix(want, "<home>"); ok {
			want = filepath.Clean(f.home + rest)
		}
		out, err := f.run(t, lines(f.bot.Token, "", "", "1", typed, "", ""), time.Second)
		if err != nil {
			t.Fatalf("setup: %v\n%s", err, out)
		}
		c, _ := config.Load(f.cfg)
		if got := c.Servers[0].Projects[0].Path; got != want {
			t.Errorf("%q stored as %q, want %q", typed, got, want)
		}
	}
}

// A server without a control panel is offered one; Enter skips it.
func TestSetupOffersThePanelChannel(t *testing.T) {
	f := newFixture(t)
	proj := t.TempDir()
	api := f.srv.AddChannel(f.bot.GuildID, "api")
	// 2 = #api is mapped; 2 again for the panel is refused, 1 (#general) taken.
	out, err := f.run(t, lines(f.bot.Token, "", "", "2", proj, "", "2", "1"), time.Second)
	if err != nil {
		t.Fatalf("setup: %v\n%s", err, out)
	}
	c, _ := config.Load(f.cfg)
	s := c.Servers[0]
	if s.GeneralChannelID != f.bot.ChannelID || len(s.Projects) != 1 || s.Projects[0].ChannelID != api {
		t.Errorf("server %+v\n%s", s, out)
	}
	if !strings.Contains(out, "#api is the channel of project api") {
		t.Errorf("a project's channel was not refused as the panel:\n%s", out)
	}
	if err := c.Validate(); err != nil {
		t.Error(err)
	}
}

// Durations are written back as they were written ("10m", not "10m0s").
func TestSetupKeepsDurationsAsWritten(t *testing.T) {
	f := newFixture(t)
	text := existingHome(t, f)
	_ = os.WriteFile(f.cfg, []byte(strings.Replace(text, "[discord]\n", "[claude]\nprompt_timeout = \"30m\"\nstart_timeout = \"90s\"\n[discord]\n", 1)), 0o600)
	if out, err := f.run(t, lines("", "", ""), time.Second); err != nil {
		t.Fatalf("setup: %v\n%s", err, out)
	}
	b, _ := os.ReadFile(f.cfg)
	if !strings.Contains(string(b), `prompt_timeout = "30m"`) || !strings.Contains(string(b), `start_timeout = "90s"`) {
		t.Errorf("config:\n%s", b)
	}
}

// A token typed while the daemon runs is not picked up by its reload (the
// config text may not change: the token is in token_file), so setup says
// to restart ccbridge for it; without a new token it says nothing of it.
func TestSetupSaysToRestartForANewTokenWhileTheDaemonRuns(t *testing.T) {
	const restart = "restart ccbridge for the new token"
	f := newFixture(t)
	proj := filepath.Join(f.dir, "api")
	var out bytes.Buffer
	err := Run(context.Background(), Options{ConfigPath: f.cfg, In: &script{steps: lines(f.bot.Token, "", "", "1", proj, "", "")}, Out: &out,
		PollEvery: 5 * time.Millisecond, Wait: time.Second, DaemonRunning: func() bool { return true }})
	if err != nil {
		t.Fatalf("setup: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), restart) {
		t.Errorf("a new token while the daemon runs: no word of a restart:\n%s", out.String())
	}
	if strings.Contains(epilogue(true, false), restart) || strings.Contains(epilogue(false, true), restart) {
		t.Error("a restart for a token asked when no new token meets a running daemon")
	}
}
