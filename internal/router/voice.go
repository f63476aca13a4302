package router

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

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
		reply("⚠️ Could not save this voice note: " + chat.ErrText(err))
		return
	}
	saved := fmt.Sprintf("The audio is saved at `%s`.", file)
	cfg := r.conf().Voice
	if !cfg.Enabled() {
		r.react(ev, "⚠️")
		reply("⚠️ Voice notes need a transcription command: set `[voice] command` in ccbridge's config (the README has two recipes). Nothing was sent to " + r.agentOf(tg) + ". " + saved)
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
	if err != nil {
		if failed := (*voice.Error)(nil); errors.As(err, &failed) {
			log.Warn("transcription failed", "err", err)
		}
		r.react(ev, "⚠️")
		reply(voice.Failed(err, saved))
		return
	}
	if !cfg.ReviewOn() {
		r.replyTo(ev, voice.Transcript("🎙️ Sent to "+r.agentOf(tg)+":", words))
		r.enqueue(tg, spoken(ev, words))
		return
	}
	rv := &voice.Review[target]{Place: tg, Note: ev, Words: words, Expires: r.now().Add(r.conf().Claude.PromptTimeout.Duration)}
	heading := "🎙️ Transcript of your voice note, not sent yet: Send it, edit it, or cancel."
	if again {
		heading = "🎙️ ccbridge restarted before this voice note was sent, so here is its transcript again, not sent yet: Send it, edit it, or cancel."
	}
	m := voice.Transcript(heading, words)
	if m.Rows, err = r.voiceButtons(ev.MessageID); err != nil {
		r.react(ev, "⚠️")
		reply("⚠️ " + chat.ErrText(err))
		return
	}
	// Registered before it is posted: a quick click must find it.
	r.voices.Put(ev.MessageID, rv)
	id, err := r.replyTo(ev, m)
	if err != nil {
		r.voices.Get(ev.MessageID, r.now(), true)
		return
	}
	r.voices.Posted(rv, id)
	r.settleExpired(rv)
}

// settleExpired records a review nobody answered handled once it expires
// (its buttons say so), so that no later start offers it again; a stop
// first leaves it in flight, offered again after the restart.
func (r *Router) settleExpired(rv *voice.Review[target]) {
	wait := r.conf().Claude.PromptTimeout.Duration // rv.expires is now plus it
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		select {
		case <-r.ctx.Done():
			return
		case <-time.After(wait):
		}
		if left, _ := r.voices.Get(rv.Note.MessageID, rv.Expires.Add(time.Nanosecond), false); left == rv {
			r.settle(rv.Place, rv.Note) // catchup.go
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

// voiceButtons are a review's controls.
func (r *Router) voiceButtons(noteID string) ([]chat.Row, error) {
	return voice.Controls(func(action string) (string, error) {
		return chat.ID{Instance: r.opt.Instance, Kind: voice.Kind, Args: []string{action, noteID}}.Encode()
	})
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
	rv, ok := r.voices.Get(noteID, r.now(), false)
	if !ok || !r.voices.Own(rv, ev.User.ID, ev.MessageID) {
		_ = resp.Respond(chat.Reply{Content: voice.Stale(ok), Ephemeral: true})
		return
	}
	switch action {
	case voice.Send:
		if _, ok := r.voices.Get(noteID, r.now(), true); !ok {
			_ = resp.Respond(chat.Reply{Content: voice.Stale(false), Ephemeral: true})
			return
		}
		_, _ = resp.Update(voice.Sent("🎙️ Sent to "+r.agentOf(rv.Place)+":", rv.Words))
		r.enqueue(rv.Place, spoken(rv.Note, rv.Words))
	case voice.Cancel:
		if _, ok := r.voices.Get(noteID, r.now(), true); !ok {
			_ = resp.Respond(chat.Reply{Content: voice.Stale(false), Ephemeral: true})
			return
		}
		_, _ = resp.Update(chat.Message{Content: "🎙️ Cancelled: nothing was sent to " + r.agentOf(rv.Place) + "."})
		r.settle(rv.Place, rv.Note) // catchup.go
	case voice.Edit:
		id, err := chat.ID{Instance: r.opt.Instance, Kind: voice.Kind, Args: []string{voice.Submit, noteID}}.Encode()
		if err != nil {
			_ = resp.Respond(chat.Reply{Content: "⚠️ " + chat.ErrText(err), Ephemeral: true})
			return
		}
		_ = resp.OpenModal(voice.EditForm(id, rv.Words))
	default:
		_ = resp.Respond(chat.Reply{Content: "This button is no longer valid.", Ephemeral: true})
	}
}

// voiceModal sends the words of the Edit… form.
func (r *Router) voiceModal(ev chat.ModalEvent, noteID string, resp chat.Responder) {
	rv, ok := r.voices.Get(noteID, r.now(), false)
	if !ok || !r.voices.Own(rv, ev.User.ID, ev.MessageID) {
		_ = resp.Respond(chat.Reply{Content: voice.Stale(ok), Ephemeral: true})
		return
	}
	words := strings.TrimSpace(ev.Values[voice.Field])
	if words == "" {
		_ = resp.Respond(chat.Reply{Content: "Nothing to send: the form was empty. The transcript is still waiting.", Ephemeral: true})
		return
	}
	if _, ok := r.voices.Get(noteID, r.now(), true); !ok {
		_ = resp.Respond(chat.Reply{Content: voice.Stale(false), Ephemeral: true})
		return
	}
	_, _ = resp.Update(voice.Sent("🎙️ Sent to "+r.agentOf(rv.Place)+" (edited):", words))
	r.enqueue(rv.Place, spoken(rv.Note, words))
}
