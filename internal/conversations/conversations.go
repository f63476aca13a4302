// Package conversations is what /sessions and /fork show and mean: the
// listing of a project's running Claudes and recent conversations, with
// the controls that take one over, resume or fork it; how long a listing's
// controls stay valid; the thread a conversation continues in. It knows no
// chat platform: the front end's dispatch starts threads and sessions.
package conversations

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/history"
	"github.com/ccbridge/ccbridge/internal/redact"
	"github.com/ccbridge/ccbridge/internal/session"
)

// Kind marks the controls of a /sessions listing (chat.ID).
const Kind = "ss"

// Listing sizes: Discord allows five rows of five buttons.
const (
	maxTakeOverButtons = 5
	maxConversations   = 4
)

// Commands are /sessions and /fork.
func Commands() []chat.CommandSpec {
	return []chat.CommandSpec{
		{Name: "sessions", Description: "Sessions: take over, resume or fork one"},
		{Name: "fork", Description: "Fork this conversation into a new thread", Options: []chat.OptionSpec{
			{Name: "prompt", Description: "first message for the fork"}}},
	}
}

// Records reads the past conversations in a folder of a project's agent
// (Claude's transcripts, Codex's rollouts): the core knows which agent a
// project runs.
type Records interface {
	History(server, project, dir string, limit int) ([]history.Conversation, error)
	Conversation(server, project, dir, id string) (history.Conversation, bool)
}

// Forkable reports whether a conversation can be forked: only Claude Code
// starts on a copy (--fork-session); any other agent would resume the
// conversation itself.
func Forkable(c history.Conversation) bool { return c.AgentName != history.AgentCodex }

// Past is how many past conversations a listing reads, running ones
// (which it leaves out) included.
func Past(running int) int { return maxConversations + running }

// List answers /sessions: the sessions of the project's agent (speaker:
// "Claude", "Codex") running in dir (Take over for those started by hand
// that can be driven) and its recent conversations not running now
// (Resume, Fork, Resume here; no Fork for a Codex conversation: ccbridge
// cannot start Codex on a copy). id names a control from its arguments;
// listed is when the listing was made.
func List(speaker, dir string, live []session.LiveSession, past []history.Conversation, listed time.Time, id func(args ...string) string) chat.Reply {
	running := map[string]bool{}
	stamp := strconv.FormatInt(listed.Unix(), 36)
	var b strings.Builder
	var takeRow []chat.Button
	fmt.Fprintf(&b, "**Running %s sessions in `%s`**\n", speaker, chat.Clip(dir, 200))
	if len(live) == 0 {
		b.WriteString("none\n")
	}
	for i, l := range live {
		running[l.ClaudeSessionID] = true
		where := "this channel"
		switch {
		case l.ThreadID != "" && l.Hand:
			where = "taken over in <#" + l.ThreadID + ">"
		case l.ThreadID != "":
			where = "<#" + l.ThreadID + ">"
		case l.Hand && !l.Driveable:
			where = "started by hand outside tmux (can be listed, not driven)"
		case l.Hand:
			where = fmt.Sprintf("started by hand, pane `%s`", l.Pane)
		}
		fmt.Fprintf(&b, "%d. %s — %s, %s%s\n", i+1, where, l.State, age(l.LastEventAt), promptLine(l.LastPrompt))
		if l.Hand && l.Driveable && l.Key == "" && len(takeRow) < maxTakeOverButtons {
			takeRow = append(takeRow, chat.Button{Label: fmt.Sprintf("Take over %d", i+1), CustomID: id("take", l.ClaudeSessionID), Style: chat.Primary})
		}
	}
	b.WriteString("**Recent conversations**\n")
	var rows []chat.Row
	if len(takeRow) > 0 {
		rows = append(rows, chat.Row{Buttons: takeRow})
	}
	n := 0
	for _, c := range past {
		if running[c.ID] || n == maxConversations {
			continue
		}
		n++
		fmt.Fprintf(&b, "%c. “%s” — %d turn(s), %s\n", 'A'+n-1, chat.Clip(OneLine(c.FirstPrompt), 120), c.Turns, age(c.Modified))
		row := []chat.Button{{Label: fmt.Sprintf("Resume %c", 'A'+n-1), CustomID: id("resume", c.ID, stamp), Style: chat.Secondary}}
		if Forkable(c) {
			row = append(row, chat.Button{Label: fmt.Sprintf("Fork %c", 'A'+n-1), CustomID: id("fork", c.ID, stamp), Style: chat.Secondary})
		}
		row = append(row, chat.Button{Label: fmt.Sprintf("Resume %c here", 'A'+n-1), CustomID: id("here", c.ID, stamp), Style: chat.Secondary})
		rows = append(rows, chat.Row{Buttons: row})
	}
	if n == 0 {
		b.WriteString("none\n")
	}
	content := b.String()
	if len([]rune(content)) > chat.Limit-20 {
		content = string([]rune(content)[:chat.Limit-20]) + "…"
	}
	return chat.Reply{Content: content, Rows: rows}
}

func promptLine(p string) string {
	if p = OneLine(p); p == "" {
		return ""
	}
	return ": “" + chat.Clip(p, 120) + "”"
}

// OneLine is a prompt on one line, as listings quote it.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func age(t time.Time) string {
	if t.IsZero() {
		return "age unknown"
	}
	d := time.Since(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h ago", int(d.Hours()))
	}
	return fmt.Sprintf("%d days ago", int(d.Hours()/24))
}

// listingTTL is how long the Resume and Fork controls of a listing stay
// valid: it showed which conversations were not running then.
const listingTTL = 10 * time.Minute

// Stale says why a listing's control may not act any more ("" when it
// may): stamp is the listing's time as its controls carry it.
func Stale(stamp string, now time.Time) string {
	listed, err := strconv.ParseInt(stamp, 36, 64)
	if age := now.Sub(time.Unix(listed, 0)); err != nil || age > listingTTL || age < -listingTTL {
		return "This listing is more than 10 minutes old, so what it shows may have changed; run /sessions again."
	}
	return ""
}

// ThreadTitle names a thread after a conversation's first prompt.
func ThreadTitle(prefix, prompt, fallback string) string {
	name := OneLine(redact.String(prompt)) // masked before it is cut
	if name == "" {
		name = fallback
	}
	name = prefix + name
	if r := []rune(name); len(r) > chat.MaxThreadName {
		name = string(r[:chat.MaxThreadName-1]) + "…"
	}
	return name
}

// LastExchange shows where a conversation stands.
func LastExchange(c history.Conversation) string {
	if c.LastPrompt == "" {
		return ""
	}
	s := "\n\n**Last exchange**\n> " + strings.ReplaceAll(chat.Clip(c.LastPrompt, 300), "\n", "\n> ")
	if c.LastReply != "" {
		s += "\n" + chat.Clip(c.LastReply, 900)
	}
	return s
}

// Find finds the past conversation of dir a control names (arg: its id,
// or its hash) in the records of the agent of server's project (speaker
// names it), or says why it cannot.
func Find(recs Records, server, project, speaker, dir, arg string) (history.Conversation, string) {
	if c, ok := recs.Conversation(server, project, dir, arg); ok {
		return c, ""
	}
	past, _ := recs.History(server, project, dir, 50)
	for _, p := range past {
		if chat.ArgIs(arg, p.ID) {
			return p, ""
		}
	}
	return history.Conversation{}, "⚠️ That conversation is not in " + speaker + "'s records any more."
}
