//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ccbridge/ccbridge/internal/testutil/fakediscord"
	"github.com/ccbridge/ccbridge/internal/testutil/fakemodel"
)

// fakeTranscriber writes a transcription command that does what a control
// file says: "fail", "slow" (sleeps past any timeout), "sleep10 <words>"
// (10 s, then the words), or the words themselves. It checks it was given an
// Ogg file, as a real transcriber would fail on anything else.
func fakeTranscriber(t *testing.T) (command, control string) {
	t.Helper()
	dir := t.TempDir()
	control = filepath.Join(dir, "mode")
	command = filepath.Join(dir, "transcribe")
	script := fmt.Sprintf(`#!/bin/sh
head -c 4 "$1" | grep -q OggS || { echo "not an ogg file: $1" >&2; exit 2; }
mode=$(cat %q)
case "$mode" in
fail) echo "whisper-cli: error: failed to open model ggml-base.en.bin" >&2; exit 1 ;;
slow) sleep 30 ;;
sleep10\ *) sleep 10; echo "${mode#sleep10 }" ;;
*) echo "$mode" ;;
esac
`, control)
	if err := os.WriteFile(command, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	return command, control
}

func setTranscriber(t *testing.T, control, mode string) {
	t.Helper()
	if err := os.WriteFile(control, []byte(mode), 0o600); err != nil {
		t.Fatal(err)
	}
}

// oggNote is what the owner's phone records: a real Ogg Opus file.
func oggNote(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "internal", "voice", "testdata", "silence-1s.ogg"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// waitReview waits for the transcript's reply to a voice note.
func (b *bridge) waitReview(p *project, note *fakediscord.Message, want string) *fakediscord.Message {
	b.t.Helper()
	return b.srv.WaitMessage(long, "the review of "+note.ID, func(m *fakediscord.Message) bool {
		return m.ChannelID == p.channel && m.Author.Bot && m.ReplyTo() == note.ID && strings.Contains(m.Content, want)
	})
}

func voiceButton(t *testing.T, m *fakediscord.Message, label string) string {
	t.Helper()
	for _, id := range m.CustomIDs() {
		if c := m.Component(id); c["label"] == label {
			return id
		}
	}
	t.Fatalf("no %q button on %q", label, m.Content)
	return ""
}

// promptsWith lists the prompts Claude sent the model that contain s.
func promptsWith(model *fakemodel.Server, s string) []string {
	var out []string
	for _, r := range model.Requests() {
		if strings.Contains(r.LastUserText, s) && !slices.Contains(out, r.LastUserText) {
			out = append(out, r.LastUserText)
		}
	}
	return out
}

// Review on: Send puts exactly the words into the session and the reply
// comes back; Edit… sends the edited words; Cancel sends nothing; a failing
// and a slow command each say why and send nothing.
func TestVoiceNoteReviewSendEditCancel(t *testing.T) {
	t.Parallel()
	command, control := fakeTranscriber(t)
	b := newBridge(t, 1, 1, fmt.Sprintf("[voice]\ncommand = [%q, \"{file}\"]\ntimeout = \"3s\"\n", command))
	p := b.projects[0]

	setTranscriber(t, control, "VOICE_ONE please list the files")
	note := b.srv.PostVoice(p.channel, b.owner, oggNote(t), 1)
	review := b.waitReview(p, note, "VOICE_ONE please list the files")
	if !strings.Contains(review.Content, "not sent yet") || len(review.CustomIDs()) != 3 {
		t.Fatalf("review = %q %q", review.Content, review.CustomIDs())
	}
	time.Sleep(500 * time.Millisecond)
	if got := promptsWith(b.model, "VOICE_ONE"); len(got) != 0 {
		t.Fatalf("Claude got %q before Send", got)
	}
	send := voiceButton(t, review, "Send")
	b.srv.Click(review.ID, send, b.owner)
	b.waitReply(p, "ok: VOICE_ONE please list the files")
	b.waitReaction(note, "✅")
	if got := promptsWith(b.model, "VOICE_ONE"); !slices.Equal(got, []string{"VOICE_ONE please list the files"}) {
		t.Fatalf("Claude got %q", got)
	}
	again := b.srv.ClickStale(review.ID, send, b.owner) // a second click (an old render) does nothing
	if r := b.srv.WaitResponse(again, 5*time.Second); r.ResponseType != 4 || !strings.Contains(string(r.Response), "already answered") {
		t.Errorf("a second Send answered %d %s", r.ResponseType, r.Response)
	}

	setTranscriber(t, control, "VOICE_TWO fix the flaky text")
	note2 := b.srv.PostVoice(p.channel, b.owner, oggNote(t), 1)
	review2 := b.waitReview(p, note2, "VOICE_TWO")
	it := b.srv.Click(review2.ID, voiceButton(t, review2, "Edit…"), b.owner)
	if r := b.srv.WaitResponse(it, 5*time.Second); r.ResponseType != 9 {
		t.Fatalf("Edit… answered %d, want a modal", r.ResponseType)
	}
	b.srv.SubmitModal(it, b.owner, map[string]string{"words": "VOICE_TWO fix the flaky test"})
	b.waitReply(p, "ok: VOICE_TWO fix the flaky test")
	if got := promptsWith(b.model, "VOICE_TWO"); !slices.Equal(got, []string{"VOICE_TWO fix the flaky test"}) {
		t.Fatalf("Claude got %q", got)
	}

	setTranscriber(t, control, "VOICE_THREE delete everything")
	note3 := b.srv.PostVoice(p.channel, b.owner, oggNote(t), 1)
	review3 := b.waitReview(p, note3, "VOICE_THREE")
	b.srv.Click(review3.ID, voiceButton(t, review3, "Cancel"), b.owner)
	b.waitCardText(review3, "Cancelled")

	setTranscriber(t, control, "fail")
	note4 := b.srv.PostVoice(p.channel, b.owner, oggNote(t), 1)
	failed := b.waitReview(p, note4, "Could not transcribe")
	if !strings.Contains(failed.Content, "failed to open model ggml-base.en.bin") || !strings.Contains(failed.Content, note4.ID+"-voice-message.ogg") {
		t.Errorf("failure reply = %q", failed.Content)
	}
	setTranscriber(t, control, "slow")
	note5 := b.srv.PostVoice(p.channel, b.owner, oggNote(t), 1)
	slow := b.waitReview(p, note5, "did not finish within 3s")
	if !strings.Contains(slow.Content, note5.ID+"-voice-message.ogg") {
		t.Errorf("timeout reply = %q", slow.Content)
	}
	b.waitReaction(note5, "⚠️")
	if got := promptsWith(b.model, "VOICE_THREE"); len(got) != 0 {
		t.Fatalf("a cancelled transcript reached Claude: %q", got)
	}
}

// Review off: the words go in at once and the posted transcript says so; a
// text sent during a 10-second transcription reaches Claude first.
func TestVoiceNoteWithoutReviewNeverBlocksText(t *testing.T) {
	t.Parallel()
	command, control := fakeTranscriber(t)
	b := newBridge(t, 1, 1, fmt.Sprintf("[voice]\ncommand = [%q, \"{file}\"]\nreview = false\n", command))
	p := b.projects[0]

	setTranscriber(t, control, "sleep10 VOICE_LATE after the text")
	note := b.srv.PostVoice(p.channel, b.owner, oggNote(t), 4)
	time.Sleep(300 * time.Millisecond)
	text := b.say(p, "TEXT_FIRST typed meanwhile")
	b.waitReply(p, "ok: TEXT_FIRST typed meanwhile")
	b.waitReaction(text, "✅")
	sent := b.waitReview(p, note, "VOICE_LATE after the text")
	if !strings.Contains(sent.Content, "Sent to Claude") || len(sent.CustomIDs()) != 0 {
		t.Errorf("transcript post = %q %q", sent.Content, sent.CustomIDs())
	}
	b.waitReply(p, "ok: VOICE_LATE after the text")
	b.waitReaction(note, "✅")
	var order []string
	for _, r := range b.model.Requests() {
		for _, w := range []string{"TEXT_FIRST", "VOICE_LATE"} {
			if strings.Contains(r.LastUserText, w) && !slices.Contains(order, w) {
				order = append(order, w)
			}
		}
	}
	if !slices.Equal(order, []string{"TEXT_FIRST", "VOICE_LATE"}) {
		t.Fatalf("Claude got them in the order %q", order)
	}
}

// No [voice]: the reply says what to set and where the audio is; nothing is
// sent and no Claude is started for it.
func TestVoiceNoteWithoutAVoiceCommand(t *testing.T) {
	t.Parallel()
	b := newBridge(t, 1, 1, "")
	p := b.projects[0]
	note := b.srv.PostVoice(p.channel, b.owner, oggNote(t), 2)
	got := b.waitReview(p, note, "Voice notes need a transcription command")
	if !strings.Contains(got.Content, "[voice] command") || !strings.Contains(got.Content, note.ID+"-voice-message.ogg") {
		t.Errorf("reply = %q", got.Content)
	}
	b.waitReaction(note, "⚠️")
	_, path, _ := strings.Cut(got.Content, "saved at `")
	path, _, _ = strings.Cut(path, "`")
	if data, err := os.ReadFile(path); err != nil || string(data) != string(oggNote(t)) || !strings.HasPrefix(path, b.runtime) {
		t.Errorf("the audio was not kept at %q (in %s): %v", path, b.runtime, err)
	}
	if len(b.model.Requests()) != 0 {
		t.Errorf("Claude was asked something: %d requests", len(b.model.Requests()))
	}
}
