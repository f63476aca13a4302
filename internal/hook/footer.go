package hook

import (
	"context"
	"time"

	"github.com/ccbridge/ccbridge/internal/chat"
	"github.com/ccbridge/ccbridge/internal/state"
)

// statusWait bounds the wait for the statusLine of a turn's last message:
// Claude runs the statusLine and the (async) Stop hook at about the same
// time, so the turn's own figures may land a moment after Stop.
var statusWait = 2 * time.Second

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

// footer is the reply's last line: `-# Opus 5.5 · ctx 42% · $0.25 · …`,
// from the statusLine of the turn's last message; "" when there is none.
func (h *handler) footer(ctx context.Context, claudeSessionID, promptID string) string {
	ext, err := h.extras()
	if err != nil || claudeSessionID == "" {
		return ""
	}
	st, err := ext.Statuses.Get(claudeSessionID)
	// Sessions ccbridge started run its statusLine; one started by hand
	// (h.route set) has it only if the user set it up: no wait for it.
	if (err != nil || st.PromptID != promptID) && h.route == nil {
		ctx, cancel := context.WithTimeout(ctx, statusWait)
		defer cancel()
		if changes, werr := ext.Statuses.Watch(ctx); werr == nil {
			for err != nil || st.PromptID != promptID {
				select {
				case <-ctx.Done():
					goto done
				case <-changes:
				}
				st, err = ext.Statuses.Get(claudeSessionID)
			}
		}
	}
done:
	if err != nil {
		return ""
	}
	text := StatusText(st, time.Now())
	if text == "" {
		return ""
	}
	return "-# " + text
}

// withFooter ends the last chunk with the footer line, or adds it as a
// message of its own when the chunk has no room.
func withFooter(chunks []string, footer string) []string {
	if footer == "" {
		return chunks
	}
	if n := len(chunks); n > 0 && len([]rune(chunks[n-1]))+1+len([]rune(footer)) <= chat.Limit {
		chunks[n-1] += "\n" + footer
		return chunks
	}
	return append(chunks, footer)
}
