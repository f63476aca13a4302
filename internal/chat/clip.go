package chat

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/ccbridge/ccbridge/internal/redact"
)

// Clip bounds text taken from elsewhere (a path, a prompt, git's stderr)
// to n characters. It masks secrets before it cuts: a secret cut in two is
// no longer recognised by the redaction on the way out. A fence in it
// would open or close a code block of the message, so it is defused.
func Clip(s string, n int) string {
	s = strings.ReplaceAll(redact.String(s), "```", "ʼʼʼ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// maxErrText bounds the error text a reply quotes: git's and tmux's stderr
// (execx.CmdError) can run to pages.
const maxErrText = 400

// ErrText is an error as a reply quotes it.
func ErrText(err error) string { return Clip(strings.TrimSpace(err.Error()), maxErrText) }

// Mention is how the core names a person so that a front end may notify
// them: Discord's own tag, which Discord renders as is and which the other
// front ends turn into their form (Telegram: a tg://user link, see
// telegram.Poster.SendMentioning) or leave as text.
func Mention(u User) string { return "<@" + u.ID + ">" }

// ShortHash is 64 bits of SHA-256, for binding a control to what it was
// drawn over.
func ShortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}
