package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/state"
	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
)

// stopWith runs the Stop hook for one turn under ctx, as a signal or the
// hook's budget would end it.
func (r *rig) stopWith(t *testing.T, ctx context.Context, prompt, text string) {
	t.Helper()
	line := fmt.Sprintf(`{"type":"assistant","apiBlockIndex":0,"message":{"id":"m-%s","stop_reason":"end_turn","content":[{"type":"text","text":%q}]}}`, prompt, text)
	f, _ := os.OpenFile(r.transcript, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	f.WriteString(line + "\n")
	f.Close()
	payload := fmt.Sprintf(`{"session_id":"sid","prompt_id":%q,"transcript_path":%q,"cwd":"/p","hook_event_name":"Stop","last_assistant_message":%q}`, prompt, r.transcript, text)
	env := map[string]string{state.EnvRuntimeDir: r.root, state.EnvSession: "home-api"}
	var out bytes.Buffer
	if code := Main(ctx, Stop, nil, strings.NewReader(payload), &out, &out, func(k string) string { return env[k] }); code != 0 || out.Len() != 0 {
		t.Fatalf("exit %d, output %q", code, out.String())
	}
}

// A hook whose wait for the channel lock ends with its context (the budget
// or a signal when the pane is killed) has already claimed the turn: the
// reply must still reach the outbox.
func TestReplyIsQueuedWhenTheLockWaitOutlivesTheContext(t *testing.T) {
	r := newRelay(t)
	unlock, err := r.store.Dir.LockChannel(context.Background(), r.bot.ChannelID)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	// Long enough to record the turn on any machine, short of the lock wait
	// and the transcript wait.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	r.stopWith(t, ctx, "p1", "the reply")
	all, _ := r.store.Outbox.List()
	if len(all) != 1 || len(r.contents()) != 0 {
		t.Fatalf("outbox entries = %d; posted = %d", len(all), len(r.contents()))
	}
	for _, o := range all {
		if o.Content != "the reply" {
			t.Fatalf("queued %q", o.Content)
		}
	}
}

// The wait for the channel lock is bounded well inside the hook's budget.
func TestLockWaitIsBounded(t *testing.T) {
	r := newRelay(t)
	old := lockWait
	lockWait = 300 * time.Millisecond
	defer func() { lockWait = old }()
	unlock, err := r.store.Dir.LockChannel(context.Background(), r.bot.ChannelID)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	start := time.Now()
	r.stopWith(t, context.Background(), "p1", "the reply")
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("hook waited %v for the lock", d)
	}
	if keys, _ := r.store.Outbox.Keys(); len(keys) != 1 {
		t.Fatalf("outbox = %v", keys)
	}
}

// A reply whose create Discord made but answered with a 502 is posted
// once: the retry carries the same nonce.
func TestReplyCreatedButAnswered502IsPostedOnce(t *testing.T) {
	r := newRelay(t)
	r.srv.FailAfterCreate("POST", "/channels/*/messages", 502, 1)
	r.stop(t, "p1", "only once")
	if got := r.contents(); len(got) != 1 || got[0] != "only once" {
		t.Fatalf("posted %q", got)
	}
	if keys, _ := r.store.Outbox.Keys(); len(keys) != 0 {
		t.Fatalf("outbox = %v", keys)
	}
}

// An upload gets time in proportion to its size (a floor of 1 Mbit/s), not
// a fixed few seconds that only a fast uplink meets.
func TestUploadTimeScalesWithThePayload(t *testing.T) {
	r := newRelay(t)
	out, _ := r.store.Dir.Outputs("home-api")
	body := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	os.WriteFile(filepath.Join(out, "big.bin"), body, 0o600)
	r.srv.SlowUploads(150_000) // 1.2 Mbit/s: about 7 s for the file
	r.stop(t, "p1", "Here. [DISCORD_ATTACH: big.bin]")
	msgs := r.srv.Messages(r.bot.ChannelID)
	if len(msgs) != 1 || len(msgs[0].Files) != 1 || !bytes.Equal(msgs[0].Files[0].Data, body) {
		keys, _ := r.store.Outbox.Keys()
		t.Fatalf("%d messages posted, outbox %v", len(msgs), keys)
	}
}

// A 401 or 403 does not drop the reply: it waits in the outbox.
func TestRefusedReplyIsKept(t *testing.T) {
	r := newRelay(t)
	r.srv.Fail("POST", "/channels/*/messages", 401, 1)
	r.stop(t, "p1", "a reply")
	all, _ := r.store.Outbox.List()
	if len(all) != 1 {
		t.Fatalf("outbox = %+v; posted %q", all, r.contents())
	}
}

// An error notice longer than a Discord message is posted in chunks.
func TestLongErrorNoticeIsChunked(t *testing.T) {
	r := newRelay(t)
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
	r.daemon.setBot(t, "home", srv.URL, r.bot.Token)
	r.stop(t, "p1", "the reply")
	mu.Lock()
	defer mu.Unlock()
	if len(posted) < 2 || !strings.HasPrefix(posted[0], "⚠️ ccbridge could not post part of Claude's reply") {
		t.Fatalf("notices posted: %q", posted)
	}
	// The refused part is not lost: it is kept on the host, and the notice
	// says where.
	failed, _ := r.store.OutboxFailed.List()
	if len(failed) != 1 || !strings.Contains(strings.Join(posted, ""), "It is kept on the ccbridge host in ") {
		t.Fatalf("kept = %+v; notices %q", failed, posted)
	}
	for _, o := range failed {
		if o.Content != "the reply" || !strings.Contains(o.LastError, "50035") {
			t.Fatalf("kept = %+v", o)
		}
	}
}

// A signal (the pane was killed) while the hook waits for the transcript
// loses nothing: the reply (last_assistant_message) went out before the
// wait, once, and its turn is recorded. (It used to be queued from there.)
func TestSignalWhileWaitingForTheTranscriptKeepsTheReply(t *testing.T) {
	r := newRelay(t)
	os.WriteFile(r.transcript, []byte(`{"type":"assistant","apiBlockIndex":0,"message":{"id":"older","stop_reason":"end_turn","content":[{"type":"text","text":"an older turn"}]}}`+"\n"), 0o600)
	payload := fmt.Sprintf(`{"session_id":"sid","prompt_id":"p1","transcript_path":%q,"cwd":"/p","hook_event_name":"Stop","last_assistant_message":"the last block"}`, r.transcript)
	env := map[string]string{state.EnvRuntimeDir: r.root, state.EnvSession: "home-api"}
	// Long enough to post the reply on any machine, short of the
	// transcript wait.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var out bytes.Buffer
	Main(ctx, Stop, nil, strings.NewReader(payload), &out, &out, func(k string) string { return env[k] })
	if all, _ := r.store.Outbox.List(); len(all) != 0 {
		t.Errorf("outbox entries = %d", len(all))
	}
	if got := r.contents(); !slices.Equal(got, []string{"the last block"}) {
		t.Errorf("posted %q", got)
	}
	if turn, err := r.store.Turns.Get(state.TurnKey("sid", "p1")); err != nil || turn.Reply != "the last block" {
		t.Errorf("turn = %+v, %v", turn, err)
	}
}

// Without Attach Files (403 50013) the reply goes to the daemon, which
// posts its text alone: neither lost nor taken for a refused bot.
func TestMissingAttachFilesQueuesTheReply(t *testing.T) {
	r := newRelay(t)
	out, _ := r.store.Dir.Outputs("home-api")
	os.WriteFile(filepath.Join(out, "out.txt"), []byte("file body"), 0o600)
	r.srv.DenyBotInChannel(r.bot, r.bot.ChannelID, fakediscord.PermAttachFiles)
	r.stop(t, "p1", "Here. [DISCORD_ATTACH: out.txt]")
	all, _ := r.store.Outbox.List()
	if len(all) != 1 {
		t.Fatalf("outbox = %+v; posted %q", all, r.contents())
	}
	for _, o := range all {
		if len(o.Files) != 1 || !strings.Contains(o.LastError, "50013") {
			t.Fatalf("queued = %+v", o)
		}
	}
}

// While the daemon is down (a restart, say) the reply waits in the
// outbox, whole and in order, for the daemon to post it when it is back.
func TestReplyWaitsInTheOutboxWhileTheDaemonIsDown(t *testing.T) {
	r := newRelay(t)
	r.daemon.stop()
	r.stop(t, "p1", strings.Repeat("A paragraph of the reply.\n\n", 120))
	if got := r.contents(); len(got) != 0 {
		t.Fatalf("posted without the daemon: %q", got)
	}
	keys, _ := r.store.Outbox.Keys()
	all, _ := r.store.Outbox.List()
	if len(keys) < 2 {
		t.Fatalf("queued %d messages", len(keys))
	}
	text := ""
	for _, k := range keys {
		o := all[k]
		if o.Server != "home" || o.ChannelID != r.bot.ChannelID || !strings.Contains(o.LastError, "daemon") {
			t.Fatalf("queued %+v", o)
		}
		text += o.Content + "\n\n"
	}
	if strings.Count(text, "A paragraph of the reply.") != 120 {
		t.Fatalf("queued %d paragraphs", strings.Count(text, "A paragraph of the reply."))
	}
}

// What the hooks queued while the daemon was down goes first: with the
// daemon back but its drain not through yet, a new reply in the channel
// queues behind it instead of overtaking it through the socket.
func TestReplyQueuesBehindWhatTheDaemonHasNotDrained(t *testing.T) {
	r := newRelay(t)
	if _, err := r.store.Outbox.Create(context.Background(), r.store.OutboxKey(),
		state.Outbound{Server: "home", ChannelID: r.bot.ChannelID, Content: "queued while the daemon was down"}); err != nil {
		t.Fatal(err)
	}
	r.stop(t, "p1", "the new reply")
	if got := r.contents(); len(got) != 0 {
		t.Fatalf("posted ahead of the queue: %q", got)
	}
	keys, _ := r.store.Outbox.Keys()
	all, _ := r.store.Outbox.List()
	if len(keys) != 2 || all[keys[0]].Content != "queued while the daemon was down" || !strings.HasPrefix(all[keys[1]].Content, "the new reply") {
		t.Fatalf("outbox = %+v", all)
	}
}
