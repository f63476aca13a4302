package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/discord"
	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
)

// drainFixture is a runtime dir with an outbox and a fake Discord.
type drainFixture struct {
	store *state.Store
	srv   *fakediscord.Server
	bot   *fakediscord.Bot
}

func newDrainFixture(t *testing.T) *drainFixture {
	t.Helper()
	store, err := state.OpenStore(filepath.Join(t.TempDir(), "rt"))
	if err != nil {
		t.Fatal(err)
	}
	srv := fakediscord.New(t)
	return &drainFixture{store: store, srv: srv, bot: srv.Main()}
}

// relay returns a drainer as a daemon would run it, with its own poster.
func (f *drainFixture) relay(t *testing.T) *relay {
	t.Helper()
	p, err := discord.NewPoster(f.srv.URL, f.bot.Token)
	if err != nil {
		t.Fatal(err)
	}
	return &relay{store: f.store, posters: map[string]chat.Poster{"home": p}, log: slog.New(slog.DiscardHandler), unknownLogged: map[string]bool{}}
}

func (f *drainFixture) queue(t *testing.T, contents ...string) {
	t.Helper()
	for _, c := range contents {
		if _, err := f.store.Outbox.Create(context.Background(), f.store.OutboxKey(), state.Outbound{Server: "home", ChannelID: f.bot.ChannelID, Content: c}); err != nil {
			t.Fatal(err)
		}
	}
}

func (f *drainFixture) contents() []string {
	var out []string
	for _, m := range f.srv.Messages(f.bot.ChannelID) {
		out = append(out, m.Content)
	}
	return out
}

// creates counts message create calls.
func (f *drainFixture) creates() int {
	n := 0
	for _, c := range f.srv.Calls() {
		if c.Method == "POST" && c.Path == "/channels/"+f.bot.ChannelID+"/messages" {
			n++
		}
	}
	return n
}

// Two drainers (two daemons, or a round that read its list before another
// posted) that both read the outbox before either takes the channel lock
// post each entry once: the list is read again under the lock.
func TestTwoDrainersPostEachEntryOnce(t *testing.T) {
	f := newDrainFixture(t)
	f.queue(t, "one", "two", "three")
	a, b := f.relay(t), f.relay(t)
	// Both read the outbox, then wait at the lock, which the test holds.
	hold, err := f.store.Dir.LockChannel(context.Background(), f.bot.ChannelID)
	if err != nil {
		t.Fatal(err)
	}
	var waiting sync.WaitGroup
	waiting.Add(2)
	for _, r := range []*relay{a, b} {
		r.lockChannel = func(ctx context.Context, ch string) (func(), error) {
			waiting.Done()
			return f.store.Dir.LockChannel(ctx, ch)
		}
	}
	var done sync.WaitGroup
	for _, r := range []*relay{a, b} {
		done.Add(1)
		go func() { defer done.Done(); r.drainOnce(context.Background()) }()
	}
	waiting.Wait()
	hold()
	done.Wait()
	if got := fmt.Sprint(f.contents()); got != "[one two three]" {
		t.Fatalf("posted %s", got)
	}
	if n := f.creates(); n != 3 {
		t.Fatalf("%d creates for 3 entries: an entry already posted was sent again", n)
	}
	if keys, _ := f.store.Outbox.Keys(); len(keys) != 0 {
		t.Fatalf("outbox = %v", keys)
	}
}

// A queued create that Discord made but answered with a 502 is posted once.
func TestDrainCreateAnswered502IsPostedOnce(t *testing.T) {
	f := newDrainFixture(t)
	f.queue(t, "queued")
	f.srv.FailAfterCreate("POST", "/channels/*/messages", 502, 1)
	f.relay(t).drainOnce(context.Background())
	if got := fmt.Sprint(f.contents()); got != "[queued]" {
		t.Fatalf("posted %s", got)
	}
}

// The drain uploads only the copies a hook made when it checked the
// markers: a record naming another file (a private key) posts without it.
func TestDrainUploadsOnlyAttachmentCopies(t *testing.T) {
	f := newDrainFixture(t)
	secret := filepath.Join(t.TempDir(), "id_ed25519")
	os.WriteFile(secret, []byte("PRIVATE KEY"), 0o600)
	out := filepath.Join(t.TempDir(), "out")
	os.Mkdir(out, 0o700)
	os.WriteFile(filepath.Join(out, "report.txt"), []byte("report"), 0o600)
	cp, err := f.store.Dir.CopyAttachment(out, "report.txt", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	f.store.Outbox.Create(ctx, f.store.OutboxKey(), state.Outbound{Server: "home", ChannelID: f.bot.ChannelID, Content: "with files", Files: []string{cp, secret}})
	f.relay(t).drainOnce(ctx)
	msgs := f.srv.Messages(f.bot.ChannelID)
	if len(msgs) != 1 || len(msgs[0].Files) != 1 || string(msgs[0].Files[0].Data) != "report" {
		t.Fatalf("messages = %+v", msgs)
	}
	if _, err := os.Stat(cp); err == nil {
		t.Error("the posted copy was kept")
	}
}

// stepClock is a clock the test moves.
type stepClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *stepClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *stepClock) Step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// A queued message whose files cannot be uploaded within its attempts is
// posted as text with a notice saying where the files are, and the
// channel's later replies follow it instead of waiting behind it forever.
func TestUnuploadableFilesDoNotBlockTheChannel(t *testing.T) {
	f := newDrainFixture(t)
	out := filepath.Join(t.TempDir(), "out")
	os.Mkdir(out, 0o700)
	os.WriteFile(filepath.Join(out, "big.bin"), []byte("payload"), 0o600)
	cp, err := f.store.Dir.CopyAttachment(out, "big.bin", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	f.store.Outbox.Create(ctx, f.store.OutboxKey(), state.Outbound{Server: "home", ChannelID: f.bot.ChannelID, Content: "the report", Files: []string{cp}})
	f.queue(t, "a later reply")
	f.srv.Fail("POST", "/channels/*/messages", 503, maxFileAttempts)
	r := f.relay(t)
	clock := &stepClock{now: time.Now()}
	r.now = clock.Now
	for range maxFileAttempts + 1 {
		r.drainOnce(ctx)
		clock.Step(retryMax)
	}
	got := f.contents()
	if len(got) != 2 || !strings.HasPrefix(got[0], "the report") || !strings.Contains(got[0], "could not upload") || !strings.Contains(got[0], cp) || got[1] != "a later reply" {
		t.Fatalf("posted %q", got)
	}
	if msgs := f.srv.Messages(f.bot.ChannelID); len(msgs[0].Files) != 0 {
		t.Fatalf("files = %+v", msgs[0].Files)
	}
	if b, err := os.ReadFile(cp); err != nil || string(b) != "payload" {
		t.Fatalf("the file named in the notice is gone: %v", err)
	}
	if keys, _ := f.store.Outbox.Keys(); len(keys) != 0 {
		t.Fatalf("outbox = %v", keys)
	}
}

// Without Attach Files in the channel (403 50013), a queued message goes
// as text with a notice naming its files; the bot is not marked refused
// and the channel's later replies follow.
func TestMissingAttachFilesPostsTheTextAlone(t *testing.T) {
	f := newDrainFixture(t)
	out := filepath.Join(t.TempDir(), "out")
	os.Mkdir(out, 0o700)
	os.WriteFile(filepath.Join(out, "r.txt"), []byte("payload"), 0o600)
	cp, err := f.store.Dir.CopyAttachment(out, "r.txt", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	f.store.Outbox.Create(ctx, f.store.OutboxKey(), state.Outbound{Server: "home", ChannelID: f.bot.ChannelID, Content: "the report", Files: []string{cp}})
	f.queue(t, "a later reply")
	f.srv.DenyBotInChannel(f.bot, f.bot.ChannelID, fakediscord.PermAttachFiles)
	r := f.relay(t)
	r.drainOnce(ctx)
	got := f.contents()
	if len(got) != 2 || !strings.HasPrefix(got[0], "the report") || !strings.Contains(got[0], "could not upload") || !strings.Contains(got[0], cp) || got[1] != "a later reply" {
		t.Fatalf("posted %q", got)
	}
	if keys, _ := f.store.Outbox.Keys(); len(keys) != 0 {
		t.Fatalf("outbox = %v", keys)
	}
}

// The drain waits between attempts instead of hammering Discord, and
// longer after each failure.
func TestDrainBacksOff(t *testing.T) {
	f := newDrainFixture(t)
	f.queue(t, "queued")
	f.srv.Fail("POST", "/channels/*/messages", 503, 1000)
	r := f.relay(t)
	clock := &stepClock{now: time.Now()}
	r.now = clock.Now
	r.drainOnce(context.Background())
	r.drainOnce(context.Background())
	if n := f.creates(); n != 1 {
		t.Fatalf("%d creates before the backoff passed; want 1", n)
	}
	clock.Step(retryFirst)
	r.drainOnce(context.Background())
	clock.Step(retryFirst)
	r.drainOnce(context.Background())
	if n := f.creates(); n != 2 {
		t.Fatalf("%d creates; want 2 (the second wait is longer)", n)
	}
}

// A 401 or 403 keeps the queued replies, records why for the panel, and
// posts them once Discord accepts the bot again.
func TestRefusedBotKeepsTheOutbox(t *testing.T) {
	for _, status := range []int{401, 403} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			f := newDrainFixture(t)
			f.queue(t, "one", "two")
			f.srv.Fail("POST", "/channels/*/messages", status, 1)
			r := f.relay(t)
			clock := &stepClock{now: time.Now()}
			r.now = clock.Now
			ctx := context.Background()
			r.drainOnce(ctx)
			if keys, _ := f.store.Outbox.Keys(); len(keys) != 2 || len(f.contents()) != 0 {
				t.Fatalf("after a %d: outbox = %v, posted %q", status, keys, f.contents())
			}
			health, err := state.OpenHealth(f.store.Dir)
			if err != nil {
				t.Fatal(err)
			}
			if h, err := health.Get("home"); err != nil || h.Status != status || h.Refused == "" || h.Queued != 2 {
				t.Fatalf("health = %+v, %v", h, err)
			}
			clock.Step(refusedRetry)
			r.drainOnce(ctx)
			if got := fmt.Sprint(f.contents()); got != "[one two]" {
				t.Fatalf("posted %s", got)
			}
			if _, err := health.Get("home"); !errors.Is(err, state.ErrNotFound) {
				t.Fatalf("health record kept after recovery: %v", err)
			}
		})
	}
}

// A long error notice about a queued message is posted in chunks.
func TestDrainErrorNoticeIsChunked(t *testing.T) {
	f := newDrainFixture(t)
	f.queue(t, "the reply")
	var mu sync.Mutex
	var posted []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var body struct {
			Content string `json:"content"`
		}
		json.NewDecoder(req.Body).Decode(&body)
		w.Header().Set("Content-Type", "application/json")
		mu.Lock()
		defer mu.Unlock()
		switch {
		case body.Content == "the reply":
			w.WriteHeader(400)
			fmt.Fprintf(w, `{"code":50035,"message":"Invalid Form Body","errors":{"content":{"_errors":[{"code":"X","message":%q}]}}}`, strings.Repeat("very long reason ", 200))
		case len([]rune(body.Content)) > 2000:
			w.WriteHeader(400)
			io.WriteString(w, `{"code":50035,"message":"Invalid Form Body"}`)
		default:
			posted = append(posted, body.Content)
			fmt.Fprintf(w, `{"id":"%d","channel_id":"1"}`, len(posted))
		}
	}))
	defer srv.Close()
	p, err := discord.NewPoster(srv.URL, "tok")
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{store: f.store, posters: map[string]chat.Poster{"home": p}, log: slog.New(slog.DiscardHandler)}
	r.drainOnce(context.Background())
	mu.Lock()
	defer mu.Unlock()
	if len(posted) < 2 || !strings.HasPrefix(posted[0], "⚠️ ccbridge could not post a queued message") {
		t.Fatalf("notices posted: %q", posted)
	}
}

// A reply that fits one message as written but not once its secrets are
// masked (the poster redacts every message) arrives whole, in messages
// Discord takes: the drain redacts before it chunks.
func TestDrainChunksAfterRedaction(t *testing.T) {
	f := newDrainFixture(t)
	reply := strings.TrimSpace(strings.Repeat("password=hunter2\n", 100))
	f.queue(t, reply, "after")
	f.relay(t).drainOnce(context.Background())
	got := f.contents()
	if len(got) < 3 || got[len(got)-1] != "after" {
		t.Fatalf("posted %d messages: %q", len(got), got)
	}
	for i, m := range got {
		if n := len([]rune(m)); n > 2000 {
			t.Errorf("message %d has %d characters", i, n)
		}
	}
	joined := strings.Join(got[:len(got)-1], "\n")
	if n := strings.Count(joined, "password=[redacted secret]"); n != 100 || strings.Contains(joined, "hunter2") {
		t.Fatalf("%d of 100 lines arrived (masked): %q", n, joined)
	}
	if keys, _ := f.store.Outbox.Keys(); len(keys) != 0 {
		t.Fatalf("outbox = %v", keys)
	}
	if keys, _ := f.store.OutboxFailed.Keys(); len(keys) != 0 {
		t.Fatalf("failed = %v", keys)
	}
}

// An 8 MiB /diff patch gets the time its upload needs at 1 Mbit/s, not
// the 10 s of a notice.
func TestPostTimeoutScalesWithTheFiles(t *testing.T) {
	patch := chat.Message{Content: "the patch", Files: []chat.File{{Name: "x.patch", Data: make([]byte, 8<<20)}}}
	if got, want := postTimeout(patch), discord.SendTimeout(8<<20); got < want || got < 60*time.Second {
		t.Fatalf("postTimeout = %s, want at least %s", got, want)
	}
	if got := postTimeout(chat.Message{Content: "a notice"}); got != noticeTimeout {
		t.Fatalf("postTimeout of text = %s", got)
	}
}

// Router notices are chunked after redaction too.
func TestReplierChunksAfterRedaction(t *testing.T) {
	f := newDrainFixture(t)
	p, err := discord.NewPoster(f.srv.URL, f.bot.Token)
	if err != nil {
		t.Fatal(err)
	}
	rp := &replier{posters: map[string]chat.Poster{"home": p}}
	if err := rp.Send(context.Background(), "home", f.bot.ChannelID, strings.Repeat("token=abcd1234\n", 150)); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(strings.Join(f.contents(), "\n"), "token=[redacted secret]"); n != 150 {
		t.Fatalf("%d of 150 lines arrived", n)
	}
}

// A queued reply to a thread deleted since (404) is not dropped: it is
// kept in outbox-failed/, the owner is told once in the thread's parent
// channel where, and the thread's later replies follow it there without
// another notice.
func TestRefusedEntryIsKeptInTheFailedFolder(t *testing.T) {
	f := newDrainFixture(t)
	ctx := context.Background()
	thread := f.srv.StartThread(f.bot.ChannelID, "session", f.srv.NewUser("owner"))
	if _, err := f.store.Sessions.Create(ctx, "s1", state.Session{Server: "home", ChannelID: f.bot.ChannelID, ThreadID: thread}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"the reply", "the next reply"} {
		if _, err := f.store.Outbox.Create(ctx, f.store.OutboxKey(), state.Outbound{Server: "home", ChannelID: thread, Content: c}); err != nil {
			t.Fatal(err)
		}
	}
	f.srv.DeleteThread(thread)
	before := len(f.contents())
	f.relay(t).drainOnce(ctx)

	if keys, _ := f.store.Outbox.Keys(); len(keys) != 0 {
		t.Fatalf("outbox = %v", keys)
	}
	failed, err := f.store.OutboxFailed.List()
	if err != nil || len(failed) != 2 {
		t.Fatalf("failed folder = %+v, %v", failed, err)
	}
	for _, o := range failed {
		if o.ChannelID != thread || !strings.Contains(o.LastError, "404") || (o.Content != "the reply" && o.Content != "the next reply") {
			t.Errorf("kept %+v", o)
		}
	}
	notices := f.contents()[before:]
	if len(notices) != 1 || !strings.Contains(notices[0], "could not post a queued message") || !strings.Contains(notices[0], filepath.Join(f.store.Dir.Root(), "outbox-failed")) {
		t.Fatalf("notices in the parent: %q", notices)
	}
}

// A reply whose hook still holds its place in the channel's order (its turn
// ended first, but it is still being posted) holds back what is queued
// after it, whatever finished first; what was queued before it goes.
func TestDrainWaitsForAnEarlierReply(t *testing.T) {
	ctx := context.Background()
	f := newDrainFixture(t)
	f.queue(t, "before")
	places, err := state.OpenPlaces(f.store.Dir)
	if err != nil {
		t.Fatal(err)
	}
	_, release, err := places.Hold(ctx, f.store, f.bot.ChannelID)
	if err != nil {
		t.Fatal(err)
	}
	f.queue(t, "after")
	r := f.relay(t)
	r.drainOnce(ctx)
	if got := f.contents(); strings.Join(got, "|") != "before" {
		t.Fatalf("with the place held: %q", got)
	}
	// The earlier reply's hook posts it, then gives its place up.
	if _, err := r.posters["home"].Post(ctx, f.bot.ChannelID, chat.Message{Content: "the earlier reply"}); err != nil {
		t.Fatal(err)
	}
	release()
	r.drainOnce(ctx)
	if got := f.contents(); strings.Join(got, "|") != "before|the earlier reply|after" {
		t.Fatalf("after the place was given up: %q", got)
	}
}
