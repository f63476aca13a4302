//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
)

// stop stops the daemon with SIGTERM, as systemd or an upgrade would, and
// waits for it to exit.
func (b *bridge) stop() {
	b.t.Helper()
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = b.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		b.t.Fatalf("the daemon did not stop on SIGTERM; output:\n%s", b.out.String())
	}
}

// received returns what Claude received in a session, in order: the text
// of each UserPromptSubmit (the last eight).
func (b *bridge) received(p *project) []string {
	b.t.Helper()
	rec, err := b.store.Sessions.Get(p.key)
	if err != nil {
		b.t.Fatalf("session %s: %v", p.key, err)
	}
	var out []string
	for _, pr := range rec.Prompts {
		out = append(out, pr.Text)
	}
	return out
}

// onceInOrder checks that each text reached Claude exactly once, in order.
func onceInOrder(t *testing.T, got []string, want ...string) {
	t.Helper()
	all := strings.Join(got, "\n")
	at := -1
	for _, w := range want {
		if n := strings.Count(all, w); n != 1 {
			t.Errorf("%q reached Claude %d times; Claude received %q", w, n, got)
			continue
		}
		i := strings.Index(all, w)
		if i < at {
			t.Errorf("%q reached Claude out of order; Claude received %q", w, got)
		}
		at = i
	}
}

// repliesOnce checks that each text was answered exactly once.
func (b *bridge) repliesOnce(p *project, texts ...string) {
	b.t.Helper()
	for _, text := range texts {
		n := 0
		for _, m := range b.botMessages(p.channel) {
			if strings.Contains(m.Content, "ok: "+text) {
				n++
			}
		}
		if n != 1 {
			b.t.Errorf("%q was answered %d times", text, n)
		}
	}
}

// Messages posted while the daemon is stopped (SIGTERM) and while it is
// dead (SIGKILL) reach Claude once each, in order, with their ✅, once it
// is back.
func TestCatchUpAfterStopAndCrash(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	warm := b.say(p, "CU_WARM")
	b.waitReaction(warm, "✅")
	b.waitReply(p, "ok: CU_WARM")

	b.stop()
	stopped := []*fakediscord.Message{b.say(p, "CU_TERM_1"), b.say(p, "CU_TERM_2"), b.say(p, "CU_TERM_3")}
	b.start()
	for _, m := range stopped {
		b.waitReaction(m, "✅")
		b.waitReply(p, "ok: "+m.Content)
	}

	b.kill()
	dead := []*fakediscord.Message{b.say(p, "CU_KILL_1"), b.say(p, "CU_KILL_2")}
	b.start()
	for _, m := range dead {
		b.waitReaction(m, "✅")
		b.waitReply(p, "ok: "+m.Content)
	}
	live := b.say(p, "CU_LIVE")
	b.waitReaction(live, "✅")
	b.waitReply(p, "ok: CU_LIVE")

	onceInOrder(t, b.received(p), "CU_WARM", "CU_TERM_1", "CU_TERM_2", "CU_TERM_3", "CU_KILL_1", "CU_KILL_2", "CU_LIVE")
	time.Sleep(time.Second) // a second reply would come within it
	b.repliesOnce(p, "CU_WARM", "CU_TERM_1", "CU_TERM_2", "CU_TERM_3", "CU_KILL_1", "CU_KILL_2", "CU_LIVE")
	for _, m := range append(stopped, dead...) {
		if cur, _ := b.srv.Message(m.ID); contains(cur.Reactions, "⚠️") {
			t.Errorf("%q was marked ⚠️", m.Content)
		}
	}
}

// A message older than catch_up (15m by default) gets ⚠️ and a Deliver
// anyway offer instead of reaching Claude; the button delivers it once, a
// second click nothing.
func TestCatchUpOldMessageDeliverAnywayOnce(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	warm := b.say(p, "CU_WARM")
	b.waitReaction(warm, "✅")

	b.kill()
	old := b.say(p, "CU_OLD")
	b.srv.Backdate(old.ID, time.Now().Add(-20*time.Minute))
	fresh := b.say(p, "CU_FRESH")
	b.start()
	b.waitReaction(fresh, "✅")
	b.waitReply(p, "ok: CU_FRESH")
	b.waitReaction(old, "⚠️")
	offer := b.waitReply(p, "longer ago than `catch_up`")
	if !strings.Contains(offer.Content, old.ID) {
		t.Errorf("the offer does not point at the message: %q", offer.Content)
	}
	onceInOrder(t, b.received(p), "CU_WARM", "CU_FRESH")
	if strings.Contains(strings.Join(b.received(p), "\n"), "CU_OLD") {
		t.Fatalf("the old message reached Claude unasked")
	}
	id := ""
	for _, c := range offer.CustomIDs() {
		if strings.Contains(c, "|late|") {
			id = c
		}
	}
	if id == "" {
		t.Fatalf("no Deliver anyway button: %v", offer.CustomIDs())
	}
	stranger := b.srv.NewUser("stranger")
	it := b.srv.WaitResponse(b.srv.Click(offer.ID, id, stranger), 10*time.Second)
	if !strings.Contains(string(it.Response), "Only the owners") {
		t.Errorf("a stranger's click: %s", it.Response)
	}
	it = b.srv.WaitResponse(b.srv.Click(offer.ID, id, b.owner), 10*time.Second)
	if it.ResponseType != 7 {
		t.Errorf("the click was answered with type %d, want 7 (the offer updated)", it.ResponseType)
	}
	b.waitReaction(old, "✅")
	b.waitReply(p, "ok: CU_OLD")
	if cur, _ := b.srv.Message(offer.ID); len(cur.CustomIDs()) != 0 {
		t.Errorf("the offer still has buttons: %v", cur.CustomIDs())
	}
	again := b.srv.WaitResponse(b.srv.ClickStale(offer.ID, id, b.owner), 10*time.Second)
	if !strings.Contains(string(again.Response), "delivered already") {
		t.Errorf("a second click: %s", again.Response)
	}
	time.Sleep(2 * time.Second) // a second delivery would reach Claude within it
	onceInOrder(t, b.received(p), "CU_WARM", "CU_FRESH", "CU_OLD")
	b.repliesOnce(p, "CU_FRESH", "CU_OLD")
}

// A thread with a session of its own is caught up too, beside its channel,
// each in its own order.
func TestCatchUpInAThread(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	th := threadOf(p, b.srv.StartThread(p.channel, "side work", b.owner))
	first := b.say(th, "CU_THREAD_0")
	b.waitReaction(first, "✅")
	b.waitReply(th, "ok: CU_THREAD_0")

	b.kill()
	inThread := []*fakediscord.Message{b.say(th, "CU_THREAD_1"), b.say(th, "CU_THREAD_2")}
	inChannel := b.say(p, "CU_CHANNEL_1")
	b.start()
	for _, m := range inThread {
		b.waitReaction(m, "✅")
		b.waitReply(th, "ok: "+m.Content)
	}
	b.waitReaction(inChannel, "✅")
	b.waitReply(p, "ok: CU_CHANNEL_1")
	onceInOrder(t, b.received(th), "CU_THREAD_0", "CU_THREAD_1", "CU_THREAD_2")
	if got := strings.Join(b.received(p), "\n"); strings.Contains(got, "CU_THREAD") || strings.Count(got, "CU_CHANNEL_1") != 1 {
		t.Errorf("the channel's session received %q", b.received(p))
	}
	time.Sleep(time.Second)
	b.repliesOnce(th, "CU_THREAD_1", "CU_THREAD_2")
	b.repliesOnce(p, "CU_CHANNEL_1")
}

// Threads that changed while ccbridge was down (fidelity-3 D3): one started
// meanwhile and one revived by a message (archived before) deliver what was
// sent in them; one archived meanwhile has its session stopped and its
// message is not read back; one deleted meanwhile has its session stopped.
func TestCatchUpThreadsThatChangedWhileDown(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	started := func(name, text string) *project {
		th := threadOf(p, b.srv.StartThread(p.channel, name, b.owner))
		m := b.say(th, text)
		b.waitReaction(m, "✅")
		b.waitReply(th, "ok: "+text)
		return th
	}
	archived, deleted, revived := started("archived while away", "CU_A_0"), started("deleted while away", "CU_D_0"), started("revived", "CU_R_0")
	b.srv.ArchiveThread(revived.channel, false)
	waitPane(t, b, revived, false, "the archived thread's session to stop")

	b.kill()
	fresh := threadOf(p, b.srv.StartThread(p.channel, "started while away", b.owner))
	inFresh := b.say(fresh, "CU_NEW_1")
	inRevived := b.say(revived, "CU_R_1") // un-archives it, as on Discord
	b.say(archived, "CU_A_1")
	b.srv.ArchiveThread(archived.channel, false)
	b.srv.DeleteThread(deleted.channel)
	b.start()

	b.waitReaction(inFresh, "✅")
	b.waitReply(fresh, "ok: CU_NEW_1")
	b.waitReaction(inRevived, "✅")
	b.waitReply(revived, "ok: CU_R_1")
	waitPane(t, b, archived, false, "the session of the thread archived while away to stop")
	waitPane(t, b, deleted, false, "the session of the thread deleted while away to stop")
	time.Sleep(time.Second) // a late delivery would come within it
	if got := strings.Join(b.received(archived), "\n"); strings.Contains(got, "CU_A_1") {
		t.Errorf("a message of a thread archived while away was read back: %q", b.received(archived))
	}
	onceInOrder(t, b.received(revived), "CU_R_0", "CU_R_1")
	onceInOrder(t, b.received(fresh), "CU_NEW_1")
}

// waitPane waits until the session of p has a live pane (alive) or none.
func waitPane(t *testing.T, b *bridge, p *project, alive bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(long); b.paneAlive(p) != alive; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// A voice note still being transcribed when the daemon is stopped, after a
// text sent later was delivered (the cursor passed the voice note), is told
// it will be delivered, and is, once, after the restart (security-3 #5).
func TestCatchUpVoiceNoteInFlightAtAStop(t *testing.T) {
	t.Parallel()
	command, control := fakeTranscriber(t)
	b := newBridge(t, 1, 1, fmt.Sprintf("[voice]\ncommand = [%q, \"{file}\"]\nreview = false\n", command))
	p := b.projects[0]
	setTranscriber(t, control, "sleep10 VOICE_HELD words")
	note := b.srv.PostVoice(p.channel, b.owner, oggNote(t), 4)
	time.Sleep(300 * time.Millisecond)
	text := b.say(p, "TEXT_AFTER the voice note")
	b.waitReaction(text, "✅")
	b.waitReply(p, "ok: TEXT_AFTER the voice note")

	b.stop()
	b.waitReply(p, "it will be delivered when ccbridge is back")
	setTranscriber(t, control, "VOICE_HELD words")
	b.start()
	b.waitReaction(note, "✅")
	b.waitReply(p, "ok: VOICE_HELD words")
	time.Sleep(time.Second) // a second delivery would come within it
	onceInOrder(t, b.received(p), "TEXT_AFTER the voice note", "VOICE_HELD words")
}
