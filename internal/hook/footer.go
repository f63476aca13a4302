package hook

import (
	"context"
	"errors"
	"math"
	"strings"
	"time"
	"unicode"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/state"
)

// extras opens the attention collections once per hook run.
func (h *handler) extras() (*state.Extras, error) {
	if h.ext == nil {
		e, err := state.OpenExtras(h.store.Dir)
		if err != nil {
			return nil, err
		}
		h.ext = e
	}
	return h.ext, nil
}

// prefs returns the session's attention settings, or the defaults when the
// daemon has not written them (they are on by default).
func (h *handler) prefs(sess state.Session) (state.SessionPrefs, []string) {
	def := state.DefaultSessionPrefs
	ext, err := h.extras()
	if err != nil {
		return def, nil
	}
	p, err := ext.Prefs.Get(state.PrefsKey(sess.Server, sess.Project))
	if err != nil {
		return def, nil
	}
	return p.For(sess.ThreadID), p.Owners
}

// footer is the reply's last line, `-# Opus 5.5 · ctx 42% · $0.25 · …`, from
// what is known when the turn ends; it never waits. Claude runs the
// statusLine about when it runs Stop (often after), and when the next
// prompt goes in at once the statusLine never names this turn at all: so
// the figures are the statusLine record of the session's latest message,
// with the model and context of the transcript's last assistant message
// (the turn's final one, written by now). own reports that they are the
// turn's own; when not, the statusLine command edits them in later
// (editFooter). line is "" when nothing is known.
func (h *handler) footer(sess state.Session, turn state.Turn) (line string, own bool) {
	if sess.Agent == agentCodex {
		return h.codexFooter(sess), true // codex.go
	}
	var st state.Status
	found := false
	if ext, err := h.extras(); err == nil && turn.ClaudeSessionID != "" {
		if s, err := ext.Statuses.Get(turn.ClaudeSessionID); err == nil {
			st, found = s, true
		}
	}
	own = found && st.PromptID == turn.PromptID
	if sess.TranscriptPath != "" {
		if u, err := lastUsage(sess.TranscriptPath); err == nil && u.ok {
			var same bool
			st, same = withUsage(st, u)
			own = own && same
		}
	}
	if text := StatusText(st, time.Now()); text != "" {
		line = "-# " + text
	}
	return line, own
}

// withUsage puts the transcript's model and context into a status record;
// same reports that the record said so already.
func withUsage(st state.Status, u usage) (state.Status, bool) {
	same := true
	if u.model != "" && u.model != st.ModelID {
		// Another model than the record's (a /model switch, or no record
		// yet): its context window is not known.
		st.Model, st.ModelID, st.HasContext, st.ContextSize = modelName(u.model), u.model, false, 0
		same = false
	}
	if st.ContextSize > 0 {
		pct := 100 * float64(u.tokens) / float64(st.ContextSize)
		same = same && st.HasContext && math.Abs(st.ContextPct-pct) < 1e-9
		st.ContextPct, st.HasContext = pct, true
	}
	return st, same
}

// modelName makes a display name of a model id the way Claude Code names
// its models ("claude-opus-5-5" → "Opus 5.5"), for a model the statusLine
// has not named yet; an id it cannot read stays as it is.
func modelName(id string) string {
	rest, ok := strings.CutPrefix(id, "claude-")
	if !ok {
		return id
	}
	var family string
	var version []string
	for _, part := range strings.Split(rest, "-") {
		switch {
		case part == "":
			return id
		case strings.IndexFunc(part, func(r rune) bool { return !unicode.IsDigit(r) }) < 0:
			if len(part) < 8 { // a date suffix (20250929) is not part of the name
				version = append(version, part)
			}
		case family == "":
			family = strings.ToUpper(part[:1]) + part[1:]
		default:
			return id
		}
	}
	if family == "" {
		return id
	}
	if len(version) == 0 {
		return family
	}
	return family + " " + strings.Join(version, ".")
}

// withFooter ends the last chunk with the footer line, or adds it as a
// message of its own when the chunk has no room within limit.
func withFooter(chunks []string, footer string, limit int) []string {
	if footer == "" {
		return chunks
	}
	if n := len(chunks); n > 0 && len([]rune(chunks[n-1]))+1+len([]rune(footer)) <= limit {
		chunks[n-1] += "\n" + footer
		return chunks
	}
	return append(chunks, footer)
}

// awaitFigures records a posted reply whose footer is not the turn's own
// figures, for the statusLine command to edit them in when they come.
func (h *handler) awaitFigures(ctx context.Context, sess state.Session, turn state.Turn, messageID, content, footer string) error {
	edits, err := state.OpenFooterEdits(h.store.Dir)
	if err != nil {
		return err
	}
	// Those of sessions that ended before their figures came.
	_, _ = edits.Prune(ctx, time.Now().Add(-footerEditFor), 0)
	if _, err := edits.Update(ctx, turn.ClaudeSessionID, func(e *state.FooterEdit) error {
		*e = state.FooterEdit{Server: sess.Server, ChannelID: sess.Channel(), MessageID: messageID, PromptID: turn.PromptID,
			Content: content, Footer: footer, At: time.Now().UTC()}
		return nil
	}); err != nil {
		return err
	}
	// The figures may have come while the reply was being posted, before
	// the record was there for the statusLine command to find.
	ext, err := h.extras()
	if err != nil {
		return nil
	}
	if st, err := ext.Statuses.Get(turn.ClaudeSessionID); err == nil && st.PromptID == turn.PromptID {
		return editFooter(ctx, h.store.Dir, turn.ClaudeSessionID, st)
	}
	return nil
}

// footerEditFor is how long a reply waits for its turn's own figures: by
// then the next turn's have come, or none will.
const footerEditFor = 2 * time.Minute

// editTimeout bounds the edit of a footer, retries included.
const editTimeout = 5 * time.Second

// editFooter edits a turn's own figures, just cached by the statusLine
// command, into the footer of its reply if it was posted without them
// (awaitFigures). The record stays for later messages of the same turn,
// until another turn's figures come or footerEditFor has passed.
func editFooter(ctx context.Context, d *state.Dir, sid string, st state.Status) error {
	if sid == "" || d == nil {
		return nil
	}
	edits, err := state.OpenFooterEdits(d)
	if err != nil {
		return err
	}
	e, err := edits.Get(sid)
	if err != nil {
		return nil // none due (ErrNotFound), or unreadable: nothing to edit
	}
	switch due := time.Since(e.At) <= footerEditFor; {
	case due && st.PromptID == e.PromptID:
	case due && st.PromptID == "":
		return nil // a refresh that names no turn says nothing about this one
	default:
		return edits.Delete(ctx, sid)
	}
	text := StatusText(st, time.Now())
	if text == "" || "-# "+text == e.Footer {
		return nil
	}
	line := "-# " + text
	content := line
	switch {
	case e.Footer != "" && strings.HasSuffix(e.Content, e.Footer):
		content = strings.TrimSuffix(e.Content, e.Footer) + line
	case e.Footer == "" && e.Content != "":
		content = e.Content + "\n" + line
	}
	// Only now the whole store: this runs after every assistant message.
	store, err := state.OpenStore(d.Root())
	if err != nil {
		return err
	}
	h := &handler{store: store}
	bot, err := store.Bots.Get(e.Server)
	if err != nil {
		return err
	}
	if len([]rune(content)) > h.limit(e.Server) {
		return edits.Delete(ctx, sid)
	}
	poster := h.botPoster(e.Server, bot)
	ectx, cancel := context.WithTimeout(ctx, editTimeout)
	defer cancel()
	if err := poster.Edit(ectx, e.ChannelID, e.MessageID, chat.Message{Content: content}); err != nil {
		return err
	}
	_, err = edits.Update(ctx, sid, func(cur *state.FooterEdit) error {
		if cur.MessageID != e.MessageID {
			return errSuperseded // a newer reply's record (or none): leave it
		}
		cur.Content, cur.Footer = content, line
		return nil
	})
	if errors.Is(err, errSuperseded) {
		return nil
	}
	return err
}

var errSuperseded = errors.New("superseded")
