package setup

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/testutil/faketelegram"
)

// tgFixture is a fake Telegram whose bot the person sets up, and a config
// that points setup at it.
type tgFixture struct {
	tg   *faketelegram.Server
	dir  string
	cfg  string
	proj string
}

func newTGFixture(t *testing.T) *tgFixture {
	f := &tgFixture{tg: faketelegram.New(t), dir: t.TempDir()}
	t.Setenv("HOME", filepath.Join(f.dir, "home"))
	f.cfg = filepath.Join(f.dir, "cfg", "config.toml")
	f.proj = filepath.Join(f.dir, "src", "api")
	_ = os.MkdirAll(f.proj, 0o755)
	_ = os.MkdirAll(filepath.Dir(f.cfg), 0o700)
	if err := os.WriteFile(f.cfg, []byte("[telegram]\napi_base = \""+f.tg.URL+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *tgFixture) run(t *testing.T, steps []step) (string, error) {
	t.Helper()
	var out syncBuffer
	err := Run(context.Background(), Options{ConfigPath: f.cfg, In: &script{steps: steps}, Out: &out,
		PollEvery: 5 * time.Millisecond, Wait: 5 * time.Second, Telegram: true})
	return out.String(), err
}

// syncBuffer is output setup writes while a test's goroutine acts.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// sendWhenPolled injects, once the wizard has polled that many times,: the person's message in a group, sent once
// setup waits for it (it must not find a message sent before the token
// was checked: there was none).
func (f *tgFixture) sendWhenPolled(t *testing.T, polls int, in faketelegram.Incoming) {
	go func() {
		if f.tg.WaitFor(5*time.Second, func() bool { return len(f.tg.CallsTo("getUpdates")) >= polls }) {
			f.tg.Inject(in)
		}
	}()
}

func TestSetupTelegramFirstRun(t *testing.T) {
	f := newTGFixture(t)
	f.sendWhenPolled(t, 1, faketelegram.Incoming{Text: "/start@ccbridge_test_bot"})
	out, err := f.run(t, lines(f.tg.Token, "phone", "", f.proj, "", ""))
	if err != nil {
		t.Fatalf("setup: %v\n%s", err, out)
	}
	for _, want := range []string{"@ccbridge_test_bot", "@BotFather", "Manage topics", `"ccbridge"`, "@owner", "config OK"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, f.tg.Token) {
		t.Error("the token was echoed")
	}
	c, err := config.Load(f.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if probs := c.Check(); len(probs) > 0 {
		t.Fatalf("config check: %v\n%s", probs, out)
	}
	if len(c.Servers) != 1 {
		t.Fatalf("servers %+v", c.Servers)
	}
	s := c.Servers[0]
	topics := f.tg.Topics(f.tg.ChatID)
	if len(topics) != 1 || topics[0].Name != "api" {
		t.Fatalf("topics %+v", topics)
	}
	want := strconv.FormatInt(topics[0].MessageThreadID, 10)
	if s.Name != "phone" || !s.Telegram() || s.ChatID != strconv.FormatInt(f.tg.ChatID, 10) || s.GuildID != "" ||
		len(s.OwnerIDs) != 1 || s.OwnerIDs[0] != strconv.FormatInt(f.tg.Owner.ID, 10) ||
		len(s.Projects) != 1 || s.Projects[0].TopicID != want || s.Projects[0].Path != f.proj || s.Projects[0].Name != "api" {
		t.Errorf("server %+v", s)
	}
	// The daemon routes by the derived ids: the topic's and General's.
	if s.Projects[0].ChannelID != config.TelegramChannelID(s.ChatID, want) || s.GeneralChannelID != s.ChatID {
		t.Errorf("derived channel ids %q %q", s.Projects[0].ChannelID, s.GeneralChannelID)
	}
	if tok, err := s.ResolveToken(); err != nil || tok != f.tg.Token || s.TokenFile == "" {
		t.Errorf("token %q %v (token_file %q)", tok, err, s.TokenFile)
	}
	text, _ := os.ReadFile(f.cfg)
	for _, discordKey := range []string{"guild_id", "general_channel_id", "channel_id ="} {
		if strings.Contains(string(text), discordKey) {
			t.Errorf("the config has the Discord key %s:\n%s", discordKey, text)
		}
	}
	// The message setup read is confirmed: the daemon does not take the
	// owner's /start for a prompt.
	if p := f.tg.Pending(); len(p) != 0 {
		t.Errorf("updates left unconfirmed: %v", p)
	}
}

// Setup confirms only what it read: a message sent after it found the group
// waits for the daemon.
func TestSetupTelegramLeavesLaterUpdates(t *testing.T) {
	f := newTGFixture(t)
	f.sendWhenPolled(t, 1, faketelegram.Incoming{Text: "hello"})
	var later int64
	steps := lines(f.tg.Token, "phone", "", f.proj, "", "")
	steps[2].before = func() { later = f.tg.Inject(faketelegram.Incoming{Text: "for the daemon"}).MessageID }
	out, err := f.run(t, steps)
	if err != nil {
		t.Fatalf("setup: %v\n%s", err, out)
	}
	if later == 0 || len(f.tg.Pending()) != 1 {
		t.Errorf("pending %v: the update sent after setup's last read should stay for the daemon\n%s", f.tg.Pending(), out)
	}
}

func TestSetupTelegramRefusedToken(t *testing.T) {
	f := newTGFixture(t)
	f.sendWhenPolled(t, 1, faketelegram.Incoming{Text: "hi"})
	out, err := f.run(t, lines("7000000001:wrong", f.tg.Token, "phone", "", f.proj, "", ""))
	if err != nil {
		t.Fatalf("setup: %v\n%s", err, out)
	}
	if !strings.Contains(out, "Telegram refused this token") || !strings.Contains(out, "/token") {
		t.Errorf("the refusal does not say what to do:\n%s", out)
	}
	out, err = newTGFixture(t).run(t, lines("1:a", "2:b", "3:c"))
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("three refused tokens: %v\n%s", err, out)
	}
}

// A group without topics is named, with how to turn them on; the message
// then sent in a forum is the one used.
func TestSetupTelegramGroupWithoutTopics(t *testing.T) {
	f := newTGFixture(t)
	basic := f.tg.AddGroup("family", faketelegram.BasicGroup)
	plain := f.tg.AddGroup("team", faketelegram.Supergroup)
	f.tg.SetMember(plain, f.tg.Bot.ID, "administrator")
	go func() {
		if !f.tg.WaitFor(5*time.Second, func() bool { return len(f.tg.CallsTo("getUpdates")) >= 1 }) {
			return
		}
		f.tg.Inject(faketelegram.Incoming{ChatID: basic, Text: "hi"})
		f.tg.Inject(faketelegram.Incoming{ChatID: plain, Text: "hi"})
		// Setup read them (and confirmed them with its next poll): Topics
		// go on in the supergroup, and the person writes again.
		if f.tg.WaitFor(5*time.Second, func() bool { return len(f.tg.Pending()) == 0 }) {
			f.tg.SetForum(plain, true)
			f.tg.Inject(faketelegram.Incoming{ChatID: plain, Text: "again"})
		}
	}()
	out, err := f.run(t, lines(f.tg.Token, "phone", "", f.proj, "", ""))
	if err != nil {
		t.Fatalf("setup: %v\n%s", err, out)
	}
	for _, want := range []string{"has no topics", "Topics"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	c, err := config.Load(f.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Servers[0].ChatID; got != strconv.FormatInt(plain, 10) {
		t.Errorf("chat_id %s, want the forum %d\n%s", got, plain, out)
	}
}

// A bot that is no administrator, then one without Manage topics: setup
// says how to fix each and goes on once it is fixed.
func TestSetupTelegramBotNotAdmin(t *testing.T) {
	f := newTGFixture(t)
	group := f.tg.AddGroup("work", faketelegram.Forum)
	f.sendWhenPolled(t, 1, faketelegram.Incoming{ChatID: group, Text: "/start@ccbridge_test_bot"})
	steps := lines(f.tg.Token, "phone", "", "", "", f.proj, "", "")
	steps[3].before = func() {
		f.tg.SetMember(group, f.tg.Bot.ID, "administrator")
		f.tg.SetManageTopics(group, f.tg.Bot.ID, false)
	}
	steps[4].before = func() { f.tg.SetManageTopics(group, f.tg.Bot.ID, true) }
	out, err := f.run(t, steps)
	if err != nil {
		t.Fatalf("setup: %v\n%s", err, out)
	}
	for _, want := range []string{"is not an administrator", "lacks the right Manage topics"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if len(f.tg.Topics(group)) != 1 {
		t.Errorf("topics %+v", f.tg.Topics(group))
	}
}

// Setup and a running daemon cannot both poll a bot: Telegram's 409 says
// to stop the daemon, and nothing is written.
func TestSetupTelegramDaemonPolling(t *testing.T) {
	f := newTGFixture(t)
	f.tg.Hook("getUpdates", func(faketelegram.Call) *faketelegram.Error {
		return &faketelegram.Error{Code: 409, Description: "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"}
	})
	before, _ := os.ReadFile(f.cfg)
	out, err := f.run(t, lines(f.tg.Token, "phone"))
	if err == nil || !strings.Contains(err.Error(), "stop") {
		t.Fatalf("setup: %v\n%s", err, out)
	}
	if after, _ := os.ReadFile(f.cfg); !bytes.Equal(before, after) {
		t.Errorf("the config was written:\n%s", after)
	}
}

// Ctrl-C while setup waits for the message ends it at once, writing
// nothing.
func TestSetupTelegramInterruptedWhileWaiting(t *testing.T) {
	f := newTGFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		if f.tg.WaitFor(5*time.Second, func() bool { return len(f.tg.CallsTo("getUpdates")) >= 2 }) {
			cancel()
		}
	}()
	var out syncBuffer
	err := Run(ctx, Options{ConfigPath: f.cfg, In: &script{steps: lines(f.tg.Token, "phone")}, Out: &out,
		PollEvery: 5 * time.Millisecond, Wait: time.Minute, Telegram: true})
	if err == nil || ctx.Err() == nil {
		t.Fatalf("setup: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "Waiting for") {
		t.Errorf("no wait message:\n%s", out.String())
	}
}

// Anyone in the group may write first: setup names the sender and makes
// them an owner only once the person at the terminal says yes; on no it
// waits for the next message.
func TestSetupTelegramOwnerIsConfirmed(t *testing.T) {
	f := newTGFixture(t)
	mallory := f.tg.AddUser("Mallory", true)
	f.sendWhenPolled(t, 1, faketelegram.Incoming{From: mallory, Text: "me first"})
	steps := lines(f.tg.Token, "phone", "n", "y", f.proj, "", "")
	steps[2].before = func() { f.tg.Inject(faketelegram.Incoming{Text: "the owner"}) }
	out, err := f.run(t, steps)
	if err != nil {
		t.Fatalf("setup: %v\n%s", err, out)
	}
	if !strings.Contains(out, "@mallory") {
		t.Errorf("the sender was not named:\n%s", out)
	}
	c, err := config.Load(f.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Servers[0].OwnerIDs; len(got) != 1 || got[0] != strconv.FormatInt(f.tg.Owner.ID, 10) {
		t.Errorf("owner_ids %v, want only the confirmed owner %d\n%s", got, f.tg.Owner.ID, out)
	}
}

// Re-running on a Telegram entry keeps its token on Enter, its projects
// and topics, and its keys; it adds a project with a new topic and writes
// no Discord key.
func TestSetupTelegramRerunAddsAProject(t *testing.T) {
	f := newTGFixture(t)
	old := f.tg.AddTopic("old")
	web := filepath.Join(f.dir, "src", "web")
	_ = os.MkdirAll(web, 0o755)
	t.Setenv("CCBRIDGE_SETUP_TG_TOKEN", f.tg.Token)
	existing := "[telegram]\napi_base = \"" + f.tg.URL + "\"\n[[servers]]\nname = \"phone\"\nplatform = \"telegram\"\ntoken_env = \"CCBRIDGE_SETUP_TG_TOKEN\"\n" +
		"chat_id = \"" + strconv.FormatInt(f.tg.ChatID, 10) + "\"\nowner_ids = [\"" + strconv.FormatInt(f.tg.Owner.ID, 10) + "\"]\nopen_roots = [\"" + filepath.Join(f.dir, "src") + "\"]\n" +
		"  [[servers.projects]]\n  name = \"old\"\n  topic_id = \"" + strconv.FormatInt(old.MessageThreadID, 10) + "\"\n  path = \"" + f.proj + "\"\n  model = \"opus\"\n"
	if err := os.WriteFile(f.cfg, []byte(existing), 0o600); err != nil {
		t.Fatal(err)
	}
	f.sendWhenPolled(t, 1, faketelegram.Incoming{Text: "again"})
	out, err := f.run(t, lines("", "", web, "", ""))
	if err != nil {
		t.Fatalf("setup: %v\n%s", err, out)
	}
	c, err := config.Load(f.cfg)
	if err != nil {
		t.Fatal(err)
	}
	if probs := c.Check(); len(probs) > 0 {
		t.Fatalf("config check: %v\n%s", probs, out)
	}
	s := c.Servers[0]
	if len(c.Servers) != 1 || s.TokenEnv != "CCBRIDGE_SETUP_TG_TOKEN" || s.TokenFile != "" || len(s.OwnerIDs) != 1 ||
		len(s.OpenRoots) != 1 || len(s.Projects) != 2 || s.Projects[0].Model != "opus" ||
		s.Projects[0].TopicID != strconv.FormatInt(old.MessageThreadID, 10) || s.Projects[1].Name != "web" || s.Projects[1].TopicID == "" {
		t.Errorf("servers %+v\n%s", c.Servers, out)
	}
	if n := len(f.tg.Topics(f.tg.ChatID)); n != 2 {
		t.Errorf("%d topics, want the old one and web's", n)
	}
	text, _ := os.ReadFile(f.cfg)
	for _, discordKey := range []string{"guild_id", "general_channel_id", "channel_id ="} {
		if strings.Contains(string(text), discordKey) {
			t.Errorf("the config has the Discord key %s:\n%s", discordKey, text)
		}
	}
}

// A 429 while waiting is waited out as Telegram asks; the wait goes on.
func TestSetupTelegramRateLimitedWhileWaiting(t *testing.T) {
	f := newTGFixture(t)
	f.tg.RateLimit("getUpdates", 1, 1)
	f.sendWhenPolled(t, 2, faketelegram.Incoming{Text: "hi"})
	out, err := f.run(t, lines(f.tg.Token, "phone", "", f.proj, "", ""))
	if err != nil {
		t.Fatalf("setup: %v\n%s", err, out)
	}
	ups := f.tg.CallsTo("getUpdates")
	if len(ups) < 2 || ups[0].Status != 429 || ups[1].At.Sub(ups[0].At) < time.Second {
		t.Errorf("getUpdates calls %+v: the retry did not wait the second Telegram asked\n%s", ups, out)
	}
}
