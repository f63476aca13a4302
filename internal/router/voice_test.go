package router

import (
	"context"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/config"
	"github.com/ccbridge/ccbridge/internal/voice"
)

// fakeTranscriber answers with words or an error, optionally waiting for
// release first; it records the files it was given.
type fakeTranscriber struct {
	mu      sync.Mutex
	words   string
	err     error
	release chan struct{}
	files   []string
}

func (f *fakeTranscriber) Transcribe(ctx context.Context, file string) (string, error) {
	f.mu.Lock()
	f.files = append(f.files, file)
	f.mu.Unlock()
	if f.release != nil {
		select {
		case <-f.release:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	return f.words, f.err
}

func voiceMsg(id string) chat.MessageEvent {
	return chat.MessageEvent{Server: "home", ChannelID: channel, MessageID: id, Author: chat.User{ID: owner}, Flags: chat.FlagVoiceMessage,
		Attachments: []chat.Attachment{{Name: "voice-message.ogg", URL: "https://cdn/" + id, Size: 4, ContentType: "audio/ogg", DurationSecs: 2.5}}}
}

func newVoiceRouter(t *testing.T, review bool, tr *fakeTranscriber) (*Router, *fakeSessions, *log) {
	t.Helper()
	r, ss, rp, l, _ := newRouter(t)
	r.opt.Config.Voice = config.Voice{Command: []string{"transcribe", "{file}"}, Review: &review, Timeout: config.Duration{Duration: time.Minute}}
	r.opt.Transcriber = tr
	for _, id := range []string{"v1", "v2"} {
		rp.files["https://cdn/"+id] = []byte("OggS")
	}
	return r, ss, l
}

func voiceID(t *testing.T, action, note string) string {
	t.Helper()
	id, err := chat.ID{Instance: "inst1", Kind: voice.Kind, Args: []string{action, note}}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// voiceClick clicks a review button on the review message, as it shows.
func voiceClick(r *Router, l *log, customID string, user string) {
	at := l.carrying(customID)
	ev := l.on(channel, at, customID)
	ev.User = chat.User{ID: user}
	r.HandleComponent(ev, fakeResponder{l: l, at: at})
}

func (f *fakeSessions) deliveredNow() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.delivered)
}

func waitOp(t *testing.T, l *log, prefix string) string {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		for _, op := range l.all() {
			if strings.HasPrefix(op, prefix) {
				return op
			}
		}
	}
	t.Fatalf("never saw %q; saw %q", prefix, l.all())
	return ""
}

func TestVoiceNoteIsReviewedThenSentOnce(t *testing.T) {
	tr := &fakeTranscriber{words: "fix the flaky test"}
	r, ss, l := newVoiceRouter(t, true, tr)
	r.HandleMessage(voiceMsg("v1"))
	post := waitOp(t, l, "post "+channel+" 🎙️ Transcript")
	if !strings.Contains(post, ">>> fix the flaky test") {
		t.Errorf("review = %q", post)
	}
	time.Sleep(50 * time.Millisecond)
	if got := ss.deliveredNow(); len(got) != 0 {
		t.Fatalf("delivered before Send: %q", got)
	}
	if b, err := os.ReadFile(tr.files[0]); err != nil || string(b) != "OggS" || !strings.HasSuffix(tr.files[0], "v1-voice-message.ogg") {
		t.Fatalf("the transcriber got %q (%q, %v)", tr.files, b, err)
	}
	voiceClick(r, l, voiceID(t, voice.Send, "v1"), owner)
	l.waitFor(t, "react v1 ✅")
	voiceClick(r, l, voiceID(t, voice.Send, "v1"), owner) // a second click does nothing
	waitOp(t, l, "respond ephemeral=true This transcript was already answered")
	if got := ss.deliveredNow(); !slices.Equal(got, []string{"fix the flaky test"}) {
		t.Fatalf("delivered %q", got)
	}
	if !slices.ContainsFunc(l.all(), func(op string) bool { return strings.HasPrefix(op, "update 🎙️ Sent to Claude:") }) {
		t.Errorf("the review was not marked sent: %q", l.all())
	}
}

func TestVoiceNoteEditSendsTheEditedWords(t *testing.T) {
	r, ss, l := newVoiceRouter(t, true, &fakeTranscriber{words: "fix the flaky text"})
	r.HandleMessage(voiceMsg("v1"))
	waitOp(t, l, "post "+channel+" 🎙️ Transcript")
	voiceClick(r, l, voiceID(t, voice.Edit, "v1"), owner)
	waitOp(t, l, "modal "+voiceID(t, voice.Submit, "v1"))
	review := l.carrying(voiceID(t, voice.Edit, "v1"))
	r.HandleModal(l.submitted(channel, review, voiceID(t, voice.Submit, "v1"), map[string]string{voice.Field: " fix the flaky test \n"}), fakeResponder{l: l, at: review})
	l.waitFor(t, "react v1 ✅")
	if got := ss.deliveredNow(); !slices.Equal(got, []string{"fix the flaky test"}) {
		t.Fatalf("delivered %q", got)
	}
}

func TestVoiceNoteCancelSendsNothing(t *testing.T) {
	r, ss, l := newVoiceRouter(t, true, &fakeTranscriber{words: "delete everything"})
	r.HandleMessage(voiceMsg("v1"))
	waitOp(t, l, "post "+channel+" 🎙️ Transcript")
	voiceClick(r, l, voiceID(t, voice.Cancel, "v1"), owner)
	waitOp(t, l, "update 🎙️ Cancelled")
	voiceClick(r, l, voiceID(t, voice.Send, "v1"), owner)
	waitOp(t, l, "respond ephemeral=true This transcript was already answered")
	time.Sleep(50 * time.Millisecond)
	if got := ss.deliveredNow(); len(got) != 0 {
		t.Fatalf("delivered %q", got)
	}
}

func TestVoiceReviewIsBoundToItsOwnerAndExpires(t *testing.T) {
	r, ss, l := newVoiceRouter(t, true, &fakeTranscriber{words: "words"})
	r.HandleMessage(voiceMsg("v1"))
	waitOp(t, l, "post "+channel+" 🎙️ Transcript")
	voiceClick(r, l, voiceID(t, voice.Send, "v1"), "666")
	waitOp(t, l, "respond ephemeral=true "+refusalForOthers)
	// Another owner's click, or a click on a copy of the buttons elsewhere.
	rv, _ := r.voices.Get("v1", time.Now(), false) // no click is in flight
	rv.Note.Author.ID = "100000000000000005"
	voiceClick(r, l, voiceID(t, voice.Send, "v1"), owner)
	waitOp(t, l, "respond ephemeral=true Only the person who sent this voice note")
	rv.Note.Author.ID = owner
	r.now = func() time.Time { return time.Now().Add(2 * time.Second) } // prompt_timeout is 1s here
	voiceClick(r, l, voiceID(t, voice.Send, "v1"), owner)
	waitOp(t, l, "respond ephemeral=true This transcript was already answered, or it expired")
	if got := ss.deliveredNow(); len(got) != 0 {
		t.Fatalf("delivered %q", got)
	}
}

// Transcription runs beside the queue: text sent meanwhile goes in first.
func TestTextGoesInWhileAVoiceNoteIsTranscribed(t *testing.T) {
	tr := &fakeTranscriber{words: "the voice note", release: make(chan struct{})}
	r, ss, l := newVoiceRouter(t, false, tr)
	r.HandleMessage(voiceMsg("v1"))
	r.HandleMessage(msg("typed while it transcribes"))
	l.waitFor(t, "react m1 ✅")
	close(tr.release)
	l.waitFor(t, "react v1 ✅")
	if got := ss.deliveredNow(); !slices.Equal(got, []string{"typed while it transcribes", "the voice note"}) {
		t.Fatalf("delivered %q", got)
	}
	if post := waitOp(t, l, "post "+channel+" 🎙️ Sent to Claude:"); !strings.Contains(post, "the voice note") {
		t.Errorf("post = %q", post)
	}
}

func TestVoiceFailuresSayWhyAndSendNothing(t *testing.T) {
	for name, c := range map[string]struct {
		tr   *fakeTranscriber
		off  bool
		want []string
	}{
		"no [voice]": {tr: &fakeTranscriber{}, off: true, want: []string{"Voice notes need a transcription command: set `[voice] command`", "v1-voice-message.ogg"}},
		"command fails": {tr: &fakeTranscriber{err: &voice.Error{Command: "transcribe", Err: os.ErrNotExist, Stderr: "model ggml-base.bin not found"}},
			want: []string{"Could not transcribe this voice note: transcribe failed", "model ggml-base.bin not found", "v1-voice-message.ogg"}},
		"timeout": {tr: &fakeTranscriber{err: &voice.Error{Command: "transcribe", TimedOut: true, Timeout: time.Minute, Err: context.DeadlineExceeded}},
			want: []string{"transcribe did not finish within 1m0s", "v1-voice-message.ogg"}},
		"empty": {tr: &fakeTranscriber{err: voice.ErrEmpty}, want: []string{"The transcript of this voice note is empty", "v1-voice-message.ogg"}},
	} {
		t.Run(name, func(t *testing.T) {
			r, ss, l := newVoiceRouter(t, true, c.tr)
			if c.off {
				r.opt.Config.Voice.Command = nil
			}
			r.HandleMessage(voiceMsg("v1"))
			l.waitFor(t, "react v1 ⚠️")
			post := waitOp(t, l, "post "+channel+" ⚠️")
			for _, w := range c.want {
				if !strings.Contains(post, w) {
					t.Errorf("reply %q lacks %q", post, w)
				}
			}
			if got := ss.deliveredNow(); len(got) != 0 {
				t.Errorf("delivered %q", got)
			}
		})
	}
}

// Audio that is not a voice message is an ordinary attachment.
func TestAnOggFileIsAnOrdinaryAttachment(t *testing.T) {
	tr := &fakeTranscriber{words: "never"}
	r, ss, l := newVoiceRouter(t, true, tr)
	ev := voiceMsg("v1")
	ev.Flags, ev.Content = 0, "listen"
	r.HandleMessage(ev)
	l.waitFor(t, "react v1 ✅")
	if got := ss.deliveredNow(); len(got) != 1 || !strings.Contains(got[0], "Attached files:") || len(tr.files) != 0 {
		t.Fatalf("delivered %q, transcribed %q", got, tr.files)
	}
}

// TestEditedLongTranscriptIsShownEdited (fidelity review 3, P10): a
// transcript too long for a message is attached; once edited and sent,
// the review shows the edited words attached in place of the heard ones,
// or, edited short, no attachment at all. The review's buttons are on a
// message with a file, and act from it.
func TestEditedLongTranscriptIsShownEdited(t *testing.T) {
	for _, edited := range []string{strings.Repeat("edited words ", 200), "short now"} {
		heard := strings.Repeat("heard words ", 200)
		r, ss, l := newVoiceRouter(t, true, &fakeTranscriber{words: heard})
		r.HandleMessage(voiceMsg("v1"))
		waitOp(t, l, "post "+channel+" 🎙️ Transcript")
		review := l.carrying(voiceID(t, voice.Edit, "v1"))
		var shown chat.Message
		r.HandleModal(l.submitted(channel, review, voiceID(t, voice.Submit, "v1"), map[string]string{voice.Field: edited}),
			updated{fakeResponder{l: l, at: review}, &shown})
		l.waitFor(t, "react v1 ✅")
		if got := ss.deliveredNow(); len(got) != 1 || got[0] != strings.TrimSpace(edited) {
			t.Fatalf("delivered %q", got)
		}
		long := len(voice.Transcript("", strings.TrimSpace(edited)).Files) == 1
		switch {
		case !shown.DropFiles:
			t.Errorf("edited to %d characters: the heard transcript stays attached", len(edited))
		case long && (len(shown.Files) != 1 || string(shown.Files[0].Data) != strings.TrimSpace(edited)):
			t.Errorf("edited long: attached %d file(s), not the edited words", len(shown.Files))
		case !long && len(shown.Files) != 0:
			t.Errorf("edited short: attached %d file(s)", len(shown.Files))
		}
	}
}
