package hook

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/state"
)

// stopAsync runs the Stop hook of prompt with last_assistant_message last
// and returns a channel closed when it is done.
func (r *rig) stopAsync(t *testing.T, prompt, last string) <-chan struct{} {
	t.Helper()
	payload := fmt.Sprintf(`{"session_id":"sid","prompt_id":%q,"transcript_path":%q,"cwd":"/p","hook_event_name":"Stop","last_assistant_message":%q}`, prompt, r.transcript, last)
	env := map[string]string{state.EnvRuntimeDir: r.root, state.EnvSession: "home-api"}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var out bytes.Buffer
		Main(context.Background(), Stop, nil, strings.NewReader(payload), &out, &out, func(k string) string { return env[k] })
	}()
	return done
}

// writeFinal appends a final message of text blocks to the transcript, as
// Claude Code does some time after Stop.
func (r *rig) writeFinal(t *testing.T, msgID string, texts ...string) {
	t.Helper()
	f, err := os.OpenFile(r.transcript, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i, text := range texts {
		fmt.Fprintf(f, `{"type":"assistant","apiBlockIndex":%d,"message":{"id":%q,"stop_reason":"end_turn","content":[{"type":"text","text":%q}]}}`+"\n", i, msgID, text)
	}
}

func (r *rig) waitContents(t *testing.T, what string, ok func([]string) bool) []string {
	t.Helper()
	// Short of the 5 s the hook would wait for the transcript.
	deadline := time.Now().Add(4 * time.Second)
	for {
		got := r.contents()
		if ok(got) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: channel holds %q", what, got)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The reply goes out as last_assistant_message while the transcript does
// not hold the final message yet (Claude Code writes it ~60 ms after
// Stop); the hook used to wait for it. A final message of one block is
// then left as posted.
func TestReplyDoesNotWaitForTheTranscript(t *testing.T) {
	r := newRelay(t)
	r.writeFinal(t, "older", "an older turn")
	done := r.stopAsync(t, "p1", "The answer.")
	r.waitContents(t, "the reply before the transcript holds it", func(got []string) bool { return slices.Equal(got, []string{"The answer."}) })
	r.writeFinal(t, "m1", "The answer.")
	<-done
	msgs := r.srv.Messages(r.bot.ChannelID)
	if len(msgs) != 1 || msgs[0].Content != "The answer." || msgs[0].Edits != 0 {
		t.Fatalf("messages = %+v", msgs)
	}
}

// A final message of several text blocks: the blocks before the last,
// found in the transcript after the reply was posted, are edited in, and
// the turn's record holds them all.
func TestEarlierBlocksAreEditedIn(t *testing.T) {
	r := newRelay(t)
	done := r.stopAsync(t, "p1", "Part B.")
	r.waitContents(t, "the last block at once", func(got []string) bool { return slices.Equal(got, []string{"Part B."}) })
	r.writeFinal(t, "m1", "Part A.", "Part B.")
	<-done
	msgs := r.srv.Messages(r.bot.ChannelID)
	if len(msgs) != 1 || msgs[0].Content != "Part A.\n\nPart B." || msgs[0].Edits != 1 {
		t.Fatalf("messages = %+v", msgs)
	}
	turn, err := r.store.Turns.Get(state.TurnKey("sid", "p1"))
	if err != nil || turn.Reply != "Part A.\n\nPart B." {
		t.Fatalf("turn = %+v, %v", turn, err)
	}
}

// Earlier blocks that no longer fit the posted message are posted after
// it, before the reply of the next turn, which waits for the place.
func TestEarlierBlocksThatDoNotFitKeepTheOrder(t *testing.T) {
	r := newRelay(t)
	long := strings.Repeat("word ", 380) // ~1,900 characters: two such blocks need two messages
	done := r.stopAsync(t, "p1", "Last "+long)
	r.waitContents(t, "the last block at once", func(got []string) bool { return len(got) == 1 })
	next := r.stopAsync(t, "p2", "The next turn.")
	time.Sleep(100 * time.Millisecond) // the next hook is waiting for p1's place
	r.writeFinal(t, "m1", "First "+long, "Last "+long)
	<-done
	r.writeFinal(t, "m2", "The next turn.")
	<-next
	got := r.contents()
	if len(got) != 3 || !strings.HasPrefix(got[0], "First ") || !strings.HasPrefix(got[1], "Last ") || got[2] != "The next turn." {
		t.Fatalf("channel holds %d messages: %q", len(got), got)
	}
}

// The footer of a reply posted before the transcript held its final
// message (so with the context of an older one) is refreshed from it once
// it is there: here that makes it the turn's own figures.
func TestFooterRefreshedFromTheFinalMessage(t *testing.T) {
	r := newRelay(t)
	r.statusLine(t, "p2", 0.25) // the turn's own: Opus 5.5, 420,000 of 1,000,000
	line := func(id, text string, tokens int) {
		f, _ := os.OpenFile(r.transcript, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		fmt.Fprintf(f, `{"type":"assistant","message":{"id":%q,"model":"claude-opus-5-5","stop_reason":"end_turn","content":[{"type":"text","text":%q}],"usage":{"input_tokens":%d,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":3}}}`+"\n", id, text, tokens)
		f.Close()
	}
	line("m1", "Answer one.", 555000)
	done := r.stopAsync(t, "p2", "Answer two.")
	r.waitContents(t, "the reply with the older context", func(got []string) bool {
		return slices.Equal(got, []string{"Answer two.\n-# Opus 5.5 · ctx 56% · $0.25"})
	})
	line("m2", "Answer two.", 420000)
	<-done
	msgs := r.srv.Messages(r.bot.ChannelID)
	if len(msgs) != 1 || msgs[0].Content != "Answer two.\n-# Opus 5.5 · ctx 42% · $0.25" || msgs[0].Edits != 1 {
		t.Fatalf("messages = %+v", msgs)
	}
	if _, err := r.footerEdits(t).Get("sid"); err == nil {
		t.Error("a footer with the turn's own figures is due an edit")
	}
}

// A reply queued during an outage is completed behind itself: the blocks
// found later are queued after it, not posted before it, even once
// Discord is back.
func TestEarlierBlocksOfAQueuedReplyQueueBehindIt(t *testing.T) {
	r := newRelay(t)
	r.srv.Fail("POST", "/channels/*/messages", 503, 1000)
	done := r.stopAsync(t, "p1", "Part B.")
	deadline := time.Now().Add(20 * time.Second)
	for keys, _ := r.store.Outbox.Keys(); len(keys) == 0; keys, _ = r.store.Outbox.Keys() {
		if time.Now().After(deadline) {
			t.Fatal("the reply was never queued")
		}
		time.Sleep(10 * time.Millisecond)
	}
	r.srv.Heal("POST", "/channels/*/messages")
	r.writeFinal(t, "m1", "Part A.", "Part B.")
	<-done
	if got := r.contents(); len(got) != 0 {
		t.Fatalf("posted ahead of the queued reply: %q", got)
	}
	all, _ := r.store.Outbox.List()
	keys, _ := r.store.Outbox.Keys()
	if len(keys) != 2 || all[keys[0]].Content != "Part B." || !strings.HasPrefix(all[keys[1]].Content, "Part A.") {
		t.Fatalf("outbox = %+v", all)
	}
}

// A reply neither posted nor queued (the daemon is not there and the
// outbox cannot be written) has no reply to complete: its earlier blocks
// are not posted after it as "the beginning of the reply above".
func TestNoCompletionOfAReplyNeitherPostedNorQueued(t *testing.T) {
	r := newRelay(t)
	r.daemon.stop()
	// The outbox's lock held all along: nothing can be queued.
	lock, err := os.OpenFile(filepath.Join(r.root, "outbox", ".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	r.writeFinal(t, "m1", "Part A.", "Part B.")
	payload := fmt.Sprintf(`{"session_id":"sid","prompt_id":"p1","transcript_path":%q,"cwd":"/p","hook_event_name":"Stop","last_assistant_message":"Part B."}`, r.transcript)
	run(t, Stop, r.root, "home-api", payload)
	b, _ := os.ReadFile(filepath.Join(r.root, "logs", "hook.log"))
	log := string(b)
	if !strings.Contains(log, "queue reply") {
		t.Fatalf("the failure is not the one staged:\n%s", log)
	}
	if strings.Contains(log, "first blocks") {
		t.Fatalf("the reply was completed although nothing was posted:\n%s", log)
	}
}

// Two turns whose final messages end the same way: the second turn's
// reply is completed from its own final message, never from the first
// turn's, which the transcript holds before this turn's prompt line.
func TestAnEarlierTurnEndingTheSameIsNotThisTurnsReply(t *testing.T) {
	r := newRelay(t)
	prompt := func(id string) {
		f, err := os.OpenFile(r.transcript, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(f, `{"type":"user","promptId":%q,"message":{"role":"user","content":"go on"}}`+"\n", id)
		f.Close()
	}
	prompt("p1")
	r.writeFinal(t, "m1", "First turn's block.", "Done.")
	<-r.stopAsync(t, "p1", "Done.")
	prompt("p2")
	done := r.stopAsync(t, "p2", "Done.")
	r.waitContents(t, "the second reply at once", func(got []string) bool { return len(got) == 2 })
	r.writeFinal(t, "m2", "Done.")
	<-done
	msgs := r.srv.Messages(r.bot.ChannelID)
	if len(msgs) != 2 || msgs[0].Content != "First turn's block.\n\nDone." || msgs[1].Content != "Done." || msgs[1].Edits != 0 {
		t.Fatalf("messages = %q, %q (edits %d)", msgs[0].Content, msgs[len(msgs)-1].Content, msgs[len(msgs)-1].Edits)
	}
}
