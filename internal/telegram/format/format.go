// Package format turns Claude's Markdown (CommonMark with GitHub's
// extensions) into Telegram messages sent with parse_mode "HTML", cut into
// chunks Telegram accepts: every chunk parses (balanced, properly nested
// tags from Telegram's list only, every <, > and & escaped), holds at most
// 4,096 UTF-16 code units of text after parsing, and reads on its own (a
// code block or inline formatting open at a cut is closed and reopened).
// It is pure: no network, no state.
//
// Markdown is parsed with goldmark, the CommonMark parser the web view
// uses too: emphasis, links, nesting and malformed input (an unclosed
// fence, a lone **) follow the specification's rules instead of a
// hand-written approximation, and every input has a parse. Tables, task
// lists, deep headings and rules are first converted as for Discord
// (chat.Markdown), so a table is the same aligned monospace block on both.
package format

import (
	"strings"
	"unicode/utf8"
)

// Telegram's limits on one message.
const (
	// MaxText is the most text a message may hold after entity parsing, in
	// UTF-16 code units, as sendMessage counts it.
	MaxText = 4096
	// maxEntities: Telegram keeps the first 100 formatting entities of a
	// message and silently drops the rest, so a chunk opens no more.
	maxEntities = 100
	// maxEntityBytes bounds a chunk's entities by size (16 bytes each plus
	// their URL or language): past a limit Telegram does not publish (a
	// text of about 9,500 characters of links) it refuses the message with
	// ENTITIES_TOO_LONG.
	maxEntityBytes = 6144
	entityBytes    = 16
	// maxHTML bounds a chunk's HTML, tags and escapes included, in bytes:
	// tdlib cuts an input string at 35,000 bytes. A chunk of 4,096
	// escaped & (20,480 bytes) and its tags fits.
	maxHTML = 24 << 10
	// maxURL: a longer link is shown as text, not linked.
	maxURL = 2048
)

// Split renders Claude's Markdown as Telegram HTML and cuts it into
// messages (see the package comment), at a paragraph break, else a line
// break, else a space, else between two characters. Concatenated, the
// chunks' text is the whole text, save the whitespace at the cuts (which
// Telegram trims). Empty or blank input gives no chunks.
func Split(markdown string) []string {
	return render(markdown).chunks()
}

// Escape makes s plain text for a message sent with parse_mode "HTML" (or
// an attribute value): <, >, & and " become entities, and bytes that are
// not UTF-8, which Telegram refuses, become U+FFFD.
func Escape(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		writeEscaped(&b, r)
	}
	return b.String()
}

func writeEscaped(b *strings.Builder, r rune) {
	switch r {
	case '<':
		b.WriteString("&lt;")
	case '>':
		b.WriteString("&gt;")
	case '&':
		b.WriteString("&amp;")
	case '"':
		b.WriteString("&quot;")
	default:
		b.WriteRune(r)
	}
}

// escapedLen is how many bytes writeEscaped writes for r.
func escapedLen(r rune) int {
	switch r {
	case '<', '>':
		return 4
	case '&':
		return 5
	case '"':
		return 6
	}
	return utf8.RuneLen(r)
}
