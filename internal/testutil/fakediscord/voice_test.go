package fakediscord

import (
	"encoding/base64"
	"io"
	"net/http"
	"testing"

	"github.com/bwmarrin/discordgo"
)

// A voice message reaches the bot as Discord sends it: flag 8192, no text,
// one audio/ogg attachment with its length and waveform, downloadable.
func TestVoiceMessageAsDiscordSendsIt(t *testing.T) {
	srv := New(t)
	bot := srv.Main()
	created := make(chan *discordgo.MessageCreate, 10)
	connect(t, srv, bot, func(dg *discordgo.Session) {
		dg.AddHandler(func(_ *discordgo.Session, m *discordgo.MessageCreate) { created <- m })
	})
	audio := []byte("OggS fake opus")
	sent := srv.PostVoice(bot.ChannelID, srv.NewUser("owner"), audio, 3.4)
	m := recv(t, created)
	if m.ID != sent.ID || m.Flags&discordgo.MessageFlagsIsVoiceMessage == 0 || m.Content != "" || len(m.Attachments) != 1 {
		t.Fatalf("voice message = %+v", m.Message)
	}
	a := m.Attachments[0]
	if a.ContentType != "audio/ogg" || a.Filename != "voice-message.ogg" || a.DurationSecs != 3.4 || a.Size != len(audio) {
		t.Errorf("attachment = %+v", a)
	}
	if w, err := base64.StdEncoding.DecodeString(a.Waveform); err != nil || len(w) == 0 || len(w) > 256 {
		t.Errorf("waveform %q: %d samples, %v", a.Waveform, len(w), err)
	}
	resp, err := http.Get(a.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if got, _ := io.ReadAll(resp.Body); string(got) != string(audio) {
		t.Errorf("downloaded %q", got)
	}
}

// A reply names a message of the same channel; an unknown one is refused
// unless fail_if_not_exists is false.
func TestRepliesNameAMessageOfTheChannel(t *testing.T) {
	srv := New(t)
	bot := srv.Main()
	auth := "Bot " + bot.Token
	path := "/channels/" + bot.ChannelID + "/messages"
	note := srv.PostVoice(bot.ChannelID, srv.NewUser("owner"), []byte("OggS"), 1)
	st, body := call(t, srv, auth, "POST", path, map[string]any{"content": "words", "message_reference": map[string]any{"message_id": note.ID}})
	accepted(t, "a reply", st, body)
	if body["type"] != float64(19) {
		t.Errorf("a reply has type %v", body["type"])
	}
	if got, _ := srv.Message(body["id"].(string)); got.ReplyTo() != note.ID {
		t.Errorf("reply to %q, want %q", got.ReplyTo(), note.ID)
	}
	st, body = call(t, srv, auth, "POST", path, map[string]any{"content": "x", "message_reference": map[string]any{"message_id": "999"}})
	rejected(t, "a reply to an unknown message", st, body, 400, 50035, "message_reference")
	f := false
	st, body = call(t, srv, auth, "POST", path, map[string]any{"content": "x", "message_reference": map[string]any{"message_id": "999", "fail_if_not_exists": f}})
	accepted(t, "fail_if_not_exists false", st, body)
	if body["type"] != float64(0) {
		t.Errorf("a reply to nothing has type %v", body["type"])
	}
}
