package fakediscord

import (
	"encoding/json"
	"regexp"
	"strings"
	"time"
)

// Discord adds a link preview (an embed) to a message whose text holds an
// http(s) link, a moment after the message is created or its text edited:
// bots' messages included, unless the message has SUPPRESS_EMBEDS (flag
// 1<<2). Links in code, and links in <angle brackets>, are not previewed.
// A message with the flag is served without embeds; create and edit (and
// interaction responses) may set the flag, and an edit may clear it.

// suppressEmbeds is Discord's SUPPRESS_EMBEDS message flag.
const suppressEmbeds = 1 << 2

// PreviewDelay is how long after a create or an edit the preview comes.
const PreviewDelay = 150 * time.Millisecond

var (
	fencedCode = regexp.MustCompile("(?s)```.*?```")
	inlineCode = regexp.MustCompile("`[^`]*`")
	linkURL    = regexp.MustCompile(`<?https?://[^\s<>]+>?`)
)

// previewURL is the first link of content that Discord previews, or "".
func previewURL(content string) string {
	text := inlineCode.ReplaceAllString(fencedCode.ReplaceAllString(content, ""), "")
	for _, u := range linkURL.FindAllString(text, -1) {
		if !strings.HasPrefix(u, "<") {
			return strings.TrimRight(u, ".,;:!?)>*_~|")
		}
	}
	return ""
}

// unfurl schedules the preview of a bot's message that links somewhere;
// caller holds s.mu.
func (s *Server) unfurl(m *Message) {
	if !m.Author.Bot || m.Ephemeral || m.Flags&suppressEmbeds != 0 || previewURL(m.Content) == "" {
		return
	}
	content := m.Content
	time.AfterFunc(PreviewDelay, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		u := previewURL(m.Content)
		if s.closed || m.Deleted || m.Content != content || m.Flags&suppressEmbeds != 0 || u == "" || m.previewed == u {
			return
		}
		e, _ := json.Marshal(map[string]any{"type": "link", "url": u, "title": "Preview of " + u, "description": "a page Discord fetched"})
		m.Embeds = append(m.Embeds, e)
		m.previewed = u
		s.dispatchGuild(m.GuildID, "MESSAGE_UPDATE", s.messageJSON(m))
		s.notify()
	})
}

// applyFlags applies the SUPPRESS_EMBEDS bit of an edit that sends flags
// (Discord lets an edit set or clear only that one).
func applyFlags(m *Message, o *outgoing) {
	if o.hasFlags {
		m.Flags = m.Flags&^suppressEmbeds | o.Flags&suppressEmbeds
	}
}

// shownEmbeds are the embeds a message is served with: none while it
// suppresses them.
func shownEmbeds(m *Message) []json.RawMessage {
	if m.Flags&suppressEmbeds != 0 || m.Embeds == nil {
		return []json.RawMessage{}
	}
	return m.Embeds
}
