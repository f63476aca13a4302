package hook

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/discord"
	"github.com/ccbridge/ccbridge/internal/redact"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
)

// relay is a runtime dir wired to a fake Discord as the daemon would leave it.
type rig struct {
	root, transcript string
	store            *state.Store
	srv              *fakediscord.Server
	bot              *fakediscord.Bot
	daemon           *fakeDaemon
}

func newRelay(t *testing.T) *rig {
	t.Helper()
	r := &rig{root: filepath.Join(t.TempDir(), "rt"), srv: fakediscord.New(t)}
	r.bot = r.srv.Main()
	var err error
	if r.store, err = state.OpenStore(r.root); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r.daemon = startDaemon(t, r.store)
	r.daemon.setBot(t, "home", r.srv.URL, r.bot.Token)
	r.store.Sessions.Update(ctx, "home-api", func(s *state.Session) error { s.Server, s.ChannelID = "home", r.bot.ChannelID; return nil })
	r.transcript = filepath.Join(t.TempDir(), "t.jsonl")
	return r
}

// stop writes a transcript whose final message is text and runs the Stop hook.
func (r *rig) stop(t *testing.T, prompt, text string) {
	t.Helper()
	line := fmt.Sprintf(`{"type":"assistant","apiBlockIndex":0,"message":{"id":"m-%s","stop_reason":"end_turn","content":[{"type":"text","text":%q}]}}`, prompt, text)
	f, _ := os.OpenFile(r.transcript, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	f.WriteString(line + "\n")
	f.Close()
	// The final message is one block, so last_assistant_message is all of it.
	payload := fmt.Sprintf(`{"session_id":"sid","prompt_id":%q,"transcript_path":%q,"cwd":"/p","hook_event_name":"Stop","last_assistant_message":%q}`, prompt, r.transcript, text)
	if out, _, code := run(t, Stop, r.root, "home-api", payload); code != 0 || out != "" {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
}

func (r *rig) contents() []string {
	var out []string
	for _, m := range r.srv.Messages(r.bot.ChannelID) {
		out = append(out, m.Content)
	}
	return out
}

func TestStopPostsTheReplyOnce(t *testing.T) {
	r := newRelay(t)
	r.stop(t, "p1", "Hello <@everyone>, done.")
	r.stop(t, "p1", "Hello <@everyone>, done.")
	msgs := r.srv.Messages(r.bot.ChannelID)
	if len(msgs) != 1 || msgs[0].Content != "Hello <@everyone>, done." || !strings.Contains(string(msgs[0].AllowedMentions), `"parse":[]`) {
		t.Fatalf("messages = %+v", msgs)
	}
}

func TestLongReplyIsChunkedInOrder(t *testing.T) {
	r := newRelay(t)
	var b strings.Builder
	for i := range 70 {
		fmt.Fprintf(&b, "Paragraph %02d %s\n\n", i, strings.Repeat("word ", 18))
		if i%20 == 10 {
			b.WriteString("```go\n" + strings.Repeat("fmt.Println(\"x\")\n", 30) + "```\n\n")
		}
	}
	text := strings.TrimSpace(b.String())
	r.stop(t, "p1", text)
	got := r.contents()
	if len(got) < 4 {
		t.Fatalf("%d messages for %d characters", len(got), len(text))
	}
	last := -1
	for _, c := range got {
		if len(c) > 2000 || strings.Count(c, "```")%2 != 0 {
			t.Errorf("bad chunk (%d chars, %d fences)", len(c), strings.Count(c, "```"))
		}
		for i := range 70 {
			if strings.Contains(c, fmt.Sprintf("Paragraph %02d ", i)) {
				if i != last+1 {
					t.Fatalf("paragraph %d after %d", i, last)
				}
				last = i
			}
		}
	}
	if last != 69 {
		t.Fatalf("last paragraph seen: %d", last)
	}
}

func TestAttachMarkersUploadAndRefuseEscapes(t *testing.T) {
	r := newRelay(t)
	out, _ := r.store.Dir.Outputs("home-api")
	os.WriteFile(filepath.Join(out, "out.txt"), []byte("file body"), 0o600)
	os.Symlink("/etc/passwd", filepath.Join(out, "link"))
	r.stop(t, "p1", "Here. [DISCORD_ATTACH: out.txt] [DISCORD_ATTACH: ../../etc/passwd] [DISCORD_ATTACH: link] [DISCORD_ATTACH: /etc/hosts]")
	msgs := r.srv.Messages(r.bot.ChannelID)
	if len(msgs) != 1 {
		t.Fatalf("messages = %+v", msgs)
	}
	m := msgs[0]
	if len(m.Files) != 1 || m.Files[0].Name != "out.txt" || string(m.Files[0].Data) != "file body" {
		t.Fatalf("files = %+v", m.Files)
	}
	for _, want := range []string{"Here.", "not attached: ../../etc/passwd is outside the outputs folder", "not attached: link is outside", "not attached: /etc/hosts is outside"} {
		if !strings.Contains(m.Content, want) {
			t.Errorf("content lacks %q:\n%s", want, m.Content)
		}
	}
	if strings.Contains(m.Content, "DISCORD_ATTACH") {
		t.Errorf("marker left in the text: %s", m.Content)
	}
}

func TestOutageGoesToTheOutboxInOrder(t *testing.T) {
	r := newRelay(t)
	r.srv.Fail("POST", "/channels/*/messages", 503, 1000)
	r.stop(t, "p1", "first reply")
	if len(r.contents()) != 0 {
		t.Fatal("posted during an outage")
	}
	keys, _ := r.store.Outbox.Keys()
	if len(keys) != 1 {
		t.Fatalf("outbox = %v", keys)
	}
	// Discord is back, but the queue must drain first: the next reply queues behind it.
	r.srv.Fail("POST", "/channels/*/messages", 503, 0)
	r.stop(t, "p2", "second reply")
	all, _ := r.store.Outbox.List()
	keys, _ = r.store.Outbox.Keys()
	if len(keys) != 2 || all[keys[0]].Content != "first reply" || all[keys[1]].Content != "second reply" {
		t.Fatalf("outbox = %+v", all)
	}
}

func TestUserPromptSubmitMarksBusy(t *testing.T) {
	r := newRelay(t)
	run(t, Stop, r.root, "home-api", `{"session_id":"sid","prompt_id":"p","transcript_path":"/t","cwd":"/p","hook_event_name":"UserPromptSubmit","prompt":"hello there","permission_mode":"plan"}`)
	s, _ := r.store.Sessions.Get("home-api")
	if !s.Busy || len(s.Prompts) != 1 || s.Prompts[0].Text != "hello there" || s.Prompts[0].At.IsZero() || s.ModeSeen != "plan" {
		t.Fatalf("session = %+v", s)
	}
	r.stop(t, "p", "done")
	if s, _ := r.store.Sessions.Get("home-api"); s.Busy {
		t.Fatal("still busy after Stop")
	}
}

func TestHandStartedSessionIsRoutedByCwd(t *testing.T) {
	r := newRelay(t)
	other := r.srv.AddChannel(r.bot.GuildID, "app2")
	r.store.Routes.Update(context.Background(), state.RoutesKey, func(rt *state.Routes) error {
		rt.Routes = []state.Route{{Path: "/src/app", Server: "home", Project: "app", ChannelID: r.bot.ChannelID}, {Path: "/src/app2", Server: "home", Project: "app2", ChannelID: other}}
		return nil
	})
	os.WriteFile(r.transcript, []byte(`{"type":"assistant","apiBlockIndex":0,"message":{"id":"m","stop_reason":"end_turn","content":[{"type":"text","text":"by hand"}]}}`+"\n"), 0o600)
	payload := func(cwd, prompt string) string {
		return fmt.Sprintf(`{"session_id":"hs","prompt_id":%q,"transcript_path":%q,"cwd":%q,"hook_event_name":"Stop","last_assistant_message":"by hand"}`, prompt, r.transcript, cwd)
	}
	run(t, Stop, r.root, "", payload("/src/app2/sub", "p1"))
	if msgs := r.srv.Messages(other); len(msgs) != 1 || msgs[0].Content != "by hand" {
		t.Fatalf("app2 channel: %+v", msgs)
	}
	run(t, Stop, r.root, "", payload("/elsewhere", "p2"))
	if n := len(r.srv.Messages(r.bot.ChannelID)) + len(r.srv.Messages(other)); n != 1 {
		t.Fatalf("a session outside every project was posted (%d messages)", n)
	}
	if s, err := r.store.Sessions.Get("hand-home-app2"); err != nil || s.ChannelID != other || s.Cwd != "/src/app2/sub" {
		t.Fatalf("hand session record = %+v, %v", s, err)
	}
}

func TestGlobalCopyStepsAsideInBridgePanes(t *testing.T) {
	r := newRelay(t)
	env := map[string]string{state.EnvRuntimeDir: r.root, state.EnvSession: "home-api"}
	var out bytes.Buffer
	code := Main(context.Background(), Stop, []string{"--global"}, strings.NewReader(`{"session_id":"s","prompt_id":"p","hook_event_name":"UserPromptSubmit","prompt":"x"}`), &out, &out, func(k string) string { return env[k] })
	if code != 0 || out.Len() != 0 {
		t.Fatalf("exit %d, output %q", code, out.String())
	}
	if s, _ := r.store.Sessions.Get("home-api"); len(s.Prompts) != 0 {
		t.Fatal("the global copy handled an event of a bridge pane")
	}
}

func TestProgressToolsLevelAndDedup(t *testing.T) {
	r := newRelay(t)
	r.store.Sessions.Update(context.Background(), "home-api", func(s *state.Session) error { s.Progress = "tools"; return nil })
	lines := `{"type":"assistant","apiBlockIndex":0,"message":{"id":"m1","content":[{"type":"text","text":"Looking first."}]}}
{"type":"assistant","apiBlockIndex":1,"message":{"id":"m1","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls -la"}}]}}
{"type":"assistant","apiBlockIndex":2,"message":{"id":"m1","content":[{"type":"tool_use","id":"toolu_2","name":"Read","input":{"file_path":"/src/a.go"}}]}}
`
	os.WriteFile(r.transcript, []byte(lines), 0o600)
	pre := func(id, tool, input string) {
		run(t, PreTool, r.root, "home-api", fmt.Sprintf(`{"session_id":"sid","prompt_id":"p","transcript_path":%q,"cwd":"/p","hook_event_name":"PreToolUse","tool_name":%q,"tool_input":%s,"tool_use_id":%q}`, r.transcript, tool, input, id))
	}
	pre("toolu_1", "Bash", `{"command":"ls -la"}`)
	pre("toolu_2", "Read", `{"file_path":"/src/a.go"}`)
	got := r.contents()
	want := []string{"Looking first.\n\n🔧 Bash `ls -la`", "🔧 Read `/src/a.go`"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("progress = %q, want %q", got, want)
	}
}

func TestProgressWaitsForATranscriptNotCreatedYet(t *testing.T) {
	r := newRelay(t)
	path := filepath.Join(t.TempDir(), "later", "t.jsonl")
	go func() {
		time.Sleep(300 * time.Millisecond)
		os.MkdirAll(filepath.Dir(path), 0o700)
		os.WriteFile(path, []byte(`{"type":"assistant","apiBlockIndex":0,"message":{"id":"m1","content":[{"type":"text","text":"Written late."}]}}
{"type":"assistant","apiBlockIndex":1,"message":{"id":"m1","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}]}}
`), 0o600)
	}()
	run(t, PreTool, r.root, "home-api", fmt.Sprintf(`{"session_id":"sid","prompt_id":"p","transcript_path":%q,"cwd":"/p","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{},"tool_use_id":"toolu_1"}`, path))
	if got := r.contents(); len(got) != 1 || got[0] != "Written late." {
		t.Fatalf("progress = %q", got)
	}
}

// A mask can be longer than the secret it hides: the reply is masked
// before it is cut into messages, so every message still fits.
func TestMaskedReplyStillFitsDiscordsLimit(t *testing.T) {
	r := newRelay(t)
	text := strings.TrimSpace(strings.Repeat("password=hunter2\n", 100))
	if len(text) >= 2000 {
		t.Fatalf("the reply must fit one message before masking (%d)", len(text))
	}
	r.stop(t, "p1", text)
	got := r.contents()
	masks := 0
	for _, c := range got {
		if n := len([]rune(c)); n > 2000 {
			t.Errorf("a message of %d characters", n)
		}
		if strings.Contains(c, "could not post") || strings.Contains(c, "hunter2") {
			t.Errorf("message %q", c)
		}
		masks += strings.Count(c, "password=[redacted secret]")
	}
	if masks != 100 {
		t.Fatalf("%d masked lines arrived of 100, in %d messages", masks, len(got))
	}
}

// A prompt typed at the terminal is mirrored through the outbox, which the
// daemon sends through the same masking client: it is queued masked and cut.
func TestMirroredPromptIsQueuedMasked(t *testing.T) {
	r := newRelay(t)
	r.setPrefs(t, nil, on)
	r.event(t, promptPayload("p1", strings.Repeat("password=hunter2\n", 100)))
	got := r.queued()
	if len(got) < 2 {
		t.Fatalf("queued %d messages", len(got))
	}
	for _, c := range got {
		if len([]rune(c)) > chat.Limit || strings.Contains(c, "hunter2") || redact.String(c) != c {
			t.Errorf("queued %d characters, not masked or growing at send: %.80q", len([]rune(c)), c)
		}
	}
}

// The hooks know no bot token: they post through the daemon, which masks
// every bot's token in what it posts, and nothing in the runtime dir they
// read holds one.
func TestHooksKnowNoBotToken(t *testing.T) {
	r := newRelay(t)
	other := fmt.Sprintf("zqother%dbotvalue", time.Now().UnixNano())
	r.daemon.setBot(t, "work", r.srv.URL, other)
	r.stop(t, "p1", "the other bot's token: "+other)
	got := r.contents()
	if len(got) != 1 || strings.Contains(got[0], other) {
		t.Fatalf("posted %q; want one message with the other bot's token masked", got)
	}
	err := filepath.WalkDir(r.root, func(p string, e fs.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() {
			return err
		}
		// The turn's own record holds the reply as Claude wrote it; no
		// file holds the token of the bot that posted it.
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte(r.bot.Token)) {
			t.Errorf("%s holds a bot token", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// holdEarlier takes a place in the channel's reply order, as the Stop hook
// of a turn that ended before would, still posting its reply.
func (r *rig) holdEarlier(t *testing.T) (string, func()) {
	t.Helper()
	places, err := state.OpenPlaces(r.store.Dir)
	if err != nil {
		t.Fatal(err)
	}
	order, release, err := places.Hold(context.Background(), r.store, r.bot.ChannelID)
	if err != nil {
		t.Fatal(err)
	}
	return order, release
}

// A reply waits for the reply of a turn that ended before it; once the
// earlier one is posted it goes, after it.
func TestReplyFollowsAnEarlierTurnStillPosting(t *testing.T) {
	r := newRelay(t)
	_, release := r.holdEarlier(t)
	poster, err := discord.NewPoster(r.srv.URL, r.bot.Token) // the earlier hook's post, as the daemon makes it
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		// The earlier hook, slower (its transcript, its retries): it posts
		// once the later one is waiting for it.
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if _, err := r.store.Turns.Get(state.TurnKey("sid", "p2")); err == nil {
				break
			}
		}
		poster.Send(context.Background(), r.bot.ChannelID, "the earlier reply", nil)
		release()
	}()
	r.stop(t, "p2", "the later reply")
	if got := r.contents(); strings.Join(got, "|") != "the earlier reply|the later reply" {
		t.Fatalf("posted %q", got)
	}
}

// An earlier reply that takes longer than placeWait: the later one goes to
// the outbox, ordered after the earlier turn (the daemon drains it once the
// earlier hook is done), and nothing is posted ahead of it.
func TestReplyQueuedBehindAnEarlierTurn(t *testing.T) {
	r := newRelay(t)
	defer func(w time.Duration) { placeWait = w }(placeWait)
	placeWait = 100 * time.Millisecond
	order, release := r.holdEarlier(t)
	defer release()
	r.stop(t, "p2", "the later reply")
	if got := r.contents(); len(got) != 0 {
		t.Fatalf("posted ahead of the earlier turn: %q", got)
	}
	all, _ := r.store.Outbox.List()
	if len(all) != 1 {
		t.Fatalf("outbox = %+v", all)
	}
	for k, o := range all {
		if k <= order || !strings.HasPrefix(o.Content, "the later reply") {
			t.Errorf("queued %q at %q, want it after %q", o.Content, k, order)
		}
	}
}

// A reply is cut at the limit of the bot's platform, as the daemon
// recorded it (chat.Poster.Limit), footer included.
func TestReplyIsCutAtTheBotsLimit(t *testing.T) {
	r := newRelay(t)
	if _, err := r.store.Bots.Update(context.Background(), "home", func(b *state.Bot) error { b.Limit = 300; return nil }); err != nil {
		t.Fatal(err)
	}
	r.stop(t, "p1", strings.Repeat("A sentence of the reply. ", 60))
	got := r.contents()
	if len(got) < 5 {
		t.Fatalf("%d messages", len(got))
	}
	for _, c := range got {
		if n := len([]rune(c)); n > 300 {
			t.Errorf("a message of %d characters", n)
		}
	}
}
