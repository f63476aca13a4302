package router

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/execx"
	"github.com/ccbridge/ccbridge/internal/voice"
)

// Voice notes: the audio of a voice message is saved with the session's
// uploads, turned into words by the user's [voice] command beside the
// session's queue (text sent meanwhile goes in at once), and, with review on,
// shown as a reply with Send, Edit… and Cancel. Only the words the owner
// sends go into the session, through the same queue as a typed message; the
// voice note takes the receipt.

// Transcriber turns a saved audio file into words.
type Transcriber interface {
	Transcribe(ctx context.Context, file string) (string, error)
}

// voiceKind is the custom_id kind of the review buttons and form:
// voice|<action>|<voice note id>.
const voiceKind = "voice"

// Review actions.
const (
	voiceSend   = "send"
	voiceEdit   = "edit"
	voiceCancel = "cancel"
	voiceSubmit = "submit" // the Edit… form
	voiceField  = "words"
)

// voiceReview is a transcript waiting for its owner's answer.
type voiceReview struct {
	tg       target
	note     chat.MessageEvent // the voice message: it takes the receipt
	words    string
	reviewID string // the review message the buttons are on
	expires  time.Time
}

// voiceReviews holds the reviews not answered yet, by voice note id. A
// review is taken out by the first answer, so a second click does nothing.
type voiceReviews struct {
	mu sync.Mutex
	m  map[string]*voiceReview
}

func (v *voiceReviews) put(id string, rv *voiceReview) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.m == nil {
		v.m = map[string]*voiceReview{}
	}
	v.m[id] = rv
}

// get returns a live review; an expired one is dropped.
func (v *voiceReviews) get(id string, now time.Time, take bool) (*voiceReview, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	rv, ok := v.m[id]
	if ok && (take || now.After(rv.expires)) {
		delete(v.m, id)
	}
	return rv, ok && !now.After(rv.expires)
}

// transcriber is the configured one, or the test's.
func (r *Router) transcriber() Transcriber {
	if r.opt.Transcriber != nil {
		return r.opt.Transcriber
	}
	var secrets []string
	for _, s := range r.conf().Servers {
		if s.TokenEnv != "" {
			secrets = append(secrets, s.TokenEnv)
		}
	}
	return voice.Transcriber{Config: r.conf().Voice, Runner: execx.Exec{}, Secrets: secrets}
}

// voiceNote handles an owner's voice message beside the session's queue.
func (r *Router) voiceNote(tg target, ev chat.MessageEvent, audio chat.Attachment) {
	r.hear(tg, ev, audio, false)
}

// hear is voiceNote; again says the voice note was in flight when
// ccbridge stopped (its review, if it had one, is gone).
func (r *Router) hear(tg target, ev chat.MessageEvent, audio chat.Attachment, again bool) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.transcribe(tg, ev, audio, again)
	}()
}

func (r *Router) transcribe(tg target, ev chat.MessageEvent, audio chat.Attachment, again bool) {
	log := r.opt.Log.With("session", tg.key, "message", ev.MessageID)
	reply := func(text string) {
		r.release(ev) // told why not, with its ⚠️ (catchup.go)
		r.replyTo(ev, chat.Message{Content: text})
	}
	if audio.Size > maxUploadBytes {
		r.react(ev, "⚠️")
		reply(fmt.Sprintf("⚠️ This voice note is %.1f MiB; ccbridge takes files up to %d MiB.", float64(audio.Size)/(1<<20), maxUploadBytes>>20))
		return
	}
	file, err := r.saveVoice(tg, ev, audio)
	if err != nil {
		log.Error("could not save a voice note", "err", err)
		r.react(ev, "⚠️")
		reply("⚠️ Could not save this voice note: " + errText(err))
		return
	}
	saved := fmt.Sprintf("The audio is saved at `%s`.", file)
	cfg := r.conf().Voice
	if !cfg.Enabled() {
		r.react(ev, "⚠️")
		reply("⚠️ Voice notes need a transcription command: set `[voice] command` in ccbridge's config (the README has two recipes). Nothing was sent to Claude. " + saved)
		return
	}
	words, err := r.transcriber().Transcribe(r.ctx, file)
	if r.ctx.Err() != nil {
		stopped := notReached
		if cfg.ReviewOn() {
			stopped = notHeard // the restart shows the transcript, and delivers nothing on its own
		}
		r.tellStopped(stopped, item{ev: ev})
		return
	}
	var failed *voice.Error
	switch {
	case errors.Is(err, voice.ErrEmpty):
		r.react(ev, "⚠️")
		reply("⚠️ The transcript of this voice note is empty; nothing was sent to Claude. " + saved)
		return
	case errors.As(err, &failed):
		log.Warn("transcription failed", "err", err)
		r.react(ev, "⚠️")
		msg := "⚠️ Could not transcribe this voice note: " + errText(err) + ". Nothing was sent to Claude. " + saved
		if failed.Stderr != "" {
			msg += "\nIts last error output:\n```\n" + strings.ReplaceAll(failed.Stderr, "```", "ʼʼʼ") + "\n```"
		}
		reply(msg)
		return
	case err != nil:
		r.react(ev, "⚠️")
		reply("⚠️ Could not transcribe this voice note: " + errText(err) + ". " + saved)
		return
	}
	if !cfg.ReviewOn() {
		r.replyTo(ev, transcriptMessage("🎙️ Sent to Claude:", words))
		r.enqueue(tg, spoken(ev, words))
		return
	}
	rv := &voiceReview{tg: tg, note: ev, words: words, expires: r.now().Add(r.conf().Claude.PromptTimeout.Duration)}
	heading := "🎙️ Transcript of your voice note, not sent yet: Send it, edit it, or cancel."
	if again {
		heading = "🎙️ ccbridge restarted before this voice note was sent, so here is its transcript again, not sent yet: Send it, edit it, or cancel."
	}
	m := transcriptMessage(heading, words)
	if m.Rows, err = r.voiceButtons(ev.MessageID); err != nil {
		r.react(ev, "⚠️")
		reply("⚠️ " + errText(err))
		return
	}
	// Registered before it is posted: a quick click must find it.
	r.voices.put(ev.MessageID, rv)
	id, err := r.replyTo(ev, m)
	if err != nil {
		r.voices.get(ev.MessageID, r.now(), true)
		return
	}
	r.voices.mu.Lock()
	rv.reviewID = id
	r.voices.mu.Unlock()
	r.settleExpired(rv)
}

// settleExpired records a review nobody answered handled once it expires
// (its buttons say so), so that no later start offers it again; a stop
// first leaves it in flight, offered again after the restart.
func (r *Router) settleExpired(rv *voiceReview) {
	wait := r.conf().Claude.PromptTimeout.Duration // rv.expires is now plus it
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		select {
		case <-r.ctx.Done():
			return
		case <-time.After(wait):
		}
		if left, _ := r.voices.get(rv.note.MessageID, rv.expires.Add(time.Nanosecond), false); left == rv {
			r.settle(rv.tg, rv.note) // catchup.go
		}
	}()
}

// spoken is the voice note as the message its words make: it goes through
// the queue like typed text, and its receipt lands on the voice note.
func spoken(note chat.MessageEvent, words string) item {
	ev := note
	ev.Content, ev.Attachments, ev.Flags = words, nil, 0
	return item{ev: ev, again: true} // the note was claimed when it arrived (catchup.go)
}

// transcriptFits leaves room in a message for the heading.
const transcriptFits = chat.Limit - 200

// transcriptMessage shows the words under a heading; words too long for one
// message go whole in a file beside their start.
func transcriptMessage(heading, words string) chat.Message {
	if utf8.RuneCountInString(words) <= transcriptFits {
		return chat.Message{Content: heading + "\n>>> " + words}
	}
	head := string([]rune(words)[:transcriptFits-100])
	return chat.Message{Content: heading + " (the whole transcript is attached)\n>>> " + head + " …",
		Files: []chat.File{{Name: "transcript.txt", Data: []byte(words)}}}
}

// sentTranscript redraws a review with the words sent: their file, if
// they need one, replaces the transcript attached for review (an update
// that names no files keeps the old ones).
func sentTranscript(heading, words string) chat.Message {
	m := transcriptMessage(heading, words)
	m.DropFiles = true
	return m
}

func (r *Router) voiceButtons(noteID string) ([]chat.Row, error) {
	var row chat.Row
	for _, b := range []struct {
		label, action string
		style         chat.ButtonStyle
	}{{"Send", voiceSend, chat.Success}, {"Edit…", voiceEdit, chat.Secondary}, {"Cancel", voiceCancel, chat.Danger}} {
		id, err := chat.ID{Instance: r.opt.Instance, Kind: voiceKind, Args: []string{b.action, noteID}}.Encode()
		if err != nil {
			return nil, err
		}
		row.Buttons = append(row.Buttons, chat.Button{Label: b.label, CustomID: id, Style: b.style})
	}
	return []chat.Row{row}, nil
}

// saveVoice downloads the audio into the session's uploads folder.
func (r *Router) saveVoice(tg target, ev chat.MessageEvent, audio chat.Attachment) (string, error) {
	if _, err := r.opt.Store.Dir.Uploads(tg.key); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(r.ctx, downloadTimeout)
	defer cancel()
	data, err := r.opt.Replier.Download(ctx, audio.URL, maxUploadBytes)
	if err != nil {
		return "", err
	}
	return r.saveUpload(tg.key, ev.MessageID+"-"+safeFileName(audio.Name), data)
}

// replyTo posts m as a reply to a message, and returns the reply's id.
func (r *Router) replyTo(ev chat.MessageEvent, m chat.Message) (string, error) {
	m.ReplyTo = ev.MessageID
	id, err := r.opt.Replier.Post(r.ctx, ev.Server, ev.ChannelID, m)
	if err != nil {
		r.opt.Log.Error("could not post a voice note's reply", "channel", ev.ChannelID, "err", err)
	}
	return id, err
}

// voiceAction answers a review button.
func (r *Router) voiceAction(ev chat.ComponentEvent, action, noteID string, resp chat.Responder) {
	rv, ok := r.voices.get(noteID, r.now(), false)
	if !ok || !r.ownReview(rv, ev.User.ID, ev.MessageID) {
		_ = resp.Respond(chat.Reply{Content: staleReview(ok), Ephemeral: true})
		return
	}
	switch action {
	case voiceSend:
		if _, ok := r.voices.get(noteID, r.now(), true); !ok {
			_ = resp.Respond(chat.Reply{Content: staleReview(false), Ephemeral: true})
			return
		}
		_, _ = resp.Update(sentTranscript("🎙️ Sent to Claude:", rv.words))
		r.enqueue(rv.tg, spoken(rv.note, rv.words))
	case voiceCancel:
		if _, ok := r.voices.get(noteID, r.now(), true); !ok {
			_ = resp.Respond(chat.Reply{Content: staleReview(false), Ephemeral: true})
			return
		}
		_, _ = resp.Update(chat.Message{Content: "🎙️ Cancelled: nothing was sent to Claude."})
		r.settle(rv.tg, rv.note) // catchup.go
	case voiceEdit:
		id, err := chat.ID{Instance: r.opt.Instance, Kind: voiceKind, Args: []string{voiceSubmit, noteID}}.Encode()
		if err != nil {
			_ = resp.Respond(chat.Reply{Content: "⚠️ " + errText(err), Ephemeral: true})
			return
		}
		_ = resp.OpenModal(chat.Modal{CustomID: id, Title: "Edit, then send to Claude", Inputs: []chat.TextInput{{
			CustomID: voiceField, Label: "What Claude gets", Paragraph: true, Value: rv.words, Required: true, MaxLength: voice.MaxWords}}})
	default:
		_ = resp.Respond(chat.Reply{Content: "This button is no longer valid.", Ephemeral: true})
	}
}

// voiceModal sends the words of the Edit… form.
func (r *Router) voiceModal(ev chat.ModalEvent, noteID string, resp chat.Responder) {
	rv, ok := r.voices.get(noteID, r.now(), false)
	if !ok || !r.ownReview(rv, ev.User.ID, ev.MessageID) {
		_ = resp.Respond(chat.Reply{Content: staleReview(ok), Ephemeral: true})
		return
	}
	words := strings.TrimSpace(ev.Values[voiceField])
	if words == "" {
		_ = resp.Respond(chat.Reply{Content: "Nothing to send: the form was empty. The transcript is still waiting.", Ephemeral: true})
		return
	}
	if _, ok := r.voices.get(noteID, r.now(), true); !ok {
		_ = resp.Respond(chat.Reply{Content: staleReview(false), Ephemeral: true})
		return
	}
	_, _ = resp.Update(sentTranscript("🎙️ Sent to Claude (edited):", words))
	r.enqueue(rv.tg, spoken(rv.note, words))
}

// ownReview says the click came from the person who sent the voice note,
// on the review message itself.
func (r *Router) ownReview(rv *voiceReview, userID, messageID string) bool {
	r.voices.mu.Lock()
	defer r.voices.mu.Unlock()
	return rv.note.Author.ID == userID && (rv.reviewID == "" || rv.reviewID == messageID)
}

func staleReview(live bool) string {
	if live {
		return "Only the person who sent this voice note can answer its transcript."
	}
	return "This transcript was already answered, or it expired; nothing was sent. Send the voice note again."
}
