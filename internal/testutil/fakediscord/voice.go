package fakediscord

import (
	"encoding/base64"
	"strings"
)

// Voice messages and replies, as Discord models them (resources/message.mdx):
// a voice message is a message with flag IS_VOICE_MESSAGE (1<<13), no text,
// and exactly one audio/ogg attachment named voice-message.ogg that carries
// duration_secs and a base64 waveform (at most 256 one-byte samples).

// FlagVoiceMessage is Discord's IS_VOICE_MESSAGE message flag.
const FlagVoiceMessage = 1 << 13

// PostVoice makes user send a voice message of ogg audio lasting secs.
func (s *Server) PostVoice(channelID string, user User, ogg []byte, secs float64) *Message {
	s.t.Helper()
	samples := make([]byte, min(256, max(1, int(secs*10))))
	for i := range samples {
		samples[i] = byte(i * 7 % 200)
	}
	return do(s, func() (*Message, error) {
		c, err := s.channel(channelID)
		if err != nil {
			return nil, err
		}
		m := &Message{ID: s.id(), ChannelID: channelID, GuildID: c.GuildID, Author: user, Flags: FlagVoiceMessage,
			Files: []File{{Name: "voice-message.ogg", ContentType: "audio/ogg", Data: ogg, DurationSecs: secs,
				Waveform: base64.StdEncoding.EncodeToString(samples)}}}
		s.addMessage(m)
		return m.clone(), nil
	})
}

// messageReference is the part of a create's message_reference the fake
// checks.
type messageReference struct {
	MessageID       string `json:"message_id"`
	ChannelID       string `json:"channel_id"`
	FailIfNotExists *bool  `json:"fail_if_not_exists"`
}

// replyTo checks a create's message_reference: the message must exist in
// the channel (a deleted or unknown one is 50035 MESSAGE_REFERENCE_UNKNOWN_MESSAGE,
// unless fail_if_not_exists is false, when the message is posted as no
// reply). A reply is message type 19. Caller holds s.mu.
func (s *Server) replyTo(chID string, ref *messageReference) (typ int, out map[string]any, bad *formError) {
	if ref == nil || ref.MessageID == "" {
		return 0, nil, nil
	}
	target, ok := s.messages[ref.MessageID]
	if !ok || target.Deleted || target.ChannelID != chID || (ref.ChannelID != "" && ref.ChannelID != chID) {
		if ref.FailIfNotExists != nil && !*ref.FailIfNotExists {
			return 0, nil, nil
		}
		return 0, nil, invalid("message_reference", "MESSAGE_REFERENCE_UNKNOWN_MESSAGE", "Unknown message")
	}
	return 19, map[string]any{"type": 0, "message_id": target.ID, "channel_id": chID, "guild_id": target.GuildID}, nil
}

// ReplyTo is the id of the message m answers, or "".
func (m *Message) ReplyTo() string {
	if m.Type != 19 || m.Reference == nil {
		return ""
	}
	id, _ := m.Reference["message_id"].(string)
	return strings.TrimSpace(id)
}
